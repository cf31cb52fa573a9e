// docs/protocol.md stays in step with the registry and the error catalogue.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { ALL_COMMANDS } from '../../src/protocol/registry.ts';
import { quoteBodySchema } from '../../src/protocol/schemas.ts';
import { SERVICE_NAMES } from '../../src/protocol/services.ts';
import { ERRORS } from '../../src/errors.ts';

const doc = readFileSync(new URL('../../docs/protocol.md', import.meta.url), 'utf8');

test('docs/protocol.md documents every command and every error code with its HTTP status', (t) => {
  for (const c of ALL_COMMANDS) t.true(doc.includes(`\`${c.name}\``), c.name);
  for (const [code, e] of Object.entries(ERRORS)) {
    t.true(doc.includes(`| \`${code}\` | ${e.status} |`), `${code} ${e.status}`);
  }
});

test('docs/protocol.md "Quote fields per service" lists quoteBodySchema\'s input fields, required ones bold', (t) => {
  const section = doc.slice(doc.indexOf('### Quote fields per service'));
  for (const service of SERVICE_NAMES) {
    const row = section.split('\n').find((l) => l.startsWith(`| \`${service}\` |`));
    if (!row) { t.fail(`no row for ${service}`); continue; }
    type Body = { properties: Record<string, unknown>; required: string[]; anyOf?: { required: string[] }[] };
    const schema = quoteBodySchema(service) as Body;
    const inputs = Object.keys(schema.properties).filter((k) => ['bytes', 'plain_hex', 'packet_hex'].includes(k));
    const oneOf = schema.anyOf?.map((a) => `\`${a.required[0]}\``).join(' or ');
    const cell = (f: string) => (schema.required.includes(f) ? `**\`${f}\`**` : `\`${f}\``);
    const want = oneOf ? `**${oneOf}**` : inputs.map(cell).join(', ');
    t.is(row.split('|')[2]!.trim(), want, service);
  }
});
