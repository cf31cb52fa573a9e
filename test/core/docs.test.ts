// docs/protocol.md stays in step with the registry and the error catalogue.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { ALL_COMMANDS } from '../../src/protocol/registry.ts';
import { ERRORS } from '../../src/errors.ts';

const doc = readFileSync(new URL('../../docs/protocol.md', import.meta.url), 'utf8');

test('docs/protocol.md documents every command and every error code with its HTTP status', (t) => {
  for (const c of ALL_COMMANDS) t.true(doc.includes(`\`${c.name}\``), c.name);
  for (const [code, e] of Object.entries(ERRORS)) t.true(doc.includes(`| \`${code}\` | ${e.status} |`), `${code} ${e.status}`);
});
