// openapi.json lints clean and teaches: the real Redocly CLI, with the repository's redocly.yaml (its
// recommended rules, less two the contract contradicts), finds no problem in the document a gateway
// serves, nor in one built for a configured public base URL; in place of those two rules, the
// exceptions are checked to be exactly the contract's. Every request body, response body and parameter
// example validates against its schema (Ajv, JSON Schema 2020-12), and no body goes without one.
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { buildOpenApi } from '../../src/discovery/openapi.ts';
import { sharedSvcd } from '../support/start-svcd.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REDOCLY = join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');
const CONFIGURED = 'https://svc.example.test';

const s = sharedSvcd(test); // no SVC_BASE_URL: the document a gateway serves out of the box
let served: any;
let configured: any;
const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
test.before(async () => {
  served = await (await fetch(`${s.ready.http}/openapi.json`)).json();
  configured = buildOpenApi({ base_url: CONFIGURED, edge_host: 'svc.example.test', edge_port: 9443, wallets: {} });
});
test.after.always(() => rmSync(dir, { recursive: true, force: true }));

interface Problem { ruleId: string; severity: string; message: string; location: { pointer: string }[] }

interface Report { totals: Record<string, number>; problems: Problem[] }

/** `redocly lint` as a user runs it, with the repository's redocly.yaml; its JSON report. */
async function lint(name: string, doc: unknown): Promise<Report> {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(doc, null, 2));
  const { stdout } = await promisify(execFile)(
    process.execPath, [REDOCLY, 'lint', '--config', join(ROOT, 'redocly.yaml'), '--format', 'json', file],
    // no telemetry and no update check: the tests reach no network
    { env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }, cwd: dir },
  ).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' })); // errors exit 1; the report says which
  return JSON.parse(stdout) as Report;
}

/**
 * What is left once the rules have run, and why it is accepted: GET /readyz, the load balancers' probe,
 * takes no input and is not rate limited, so it has no 4XX to document; and no licence is stated while
 * package.json names none (the document takes it from there).
 */
function accepted(): string[] {
  const licensed = Boolean(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).license);
  return ['info-license #/info', 'operation-4xx-response #/paths/~1readyz/get/responses'].slice(licensed ? 1 : 0);
}

for (const [name, doc] of [['served', () => served], ['configured', () => configured]] as const) {
  test(`redocly lint (recommended, redocly.yaml): the ${name} document has no problem but the accepted`, async (t) => {
    const { totals, problems } = await lint(`${name}.json`, doc());
    t.log(totals);
    const found = problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}`);
    t.deepEqual(found, accepted(), JSON.stringify(problems.map((p) => [p.ruleId, p.message]), null, 1));
  });
}

test('the two rules redocly.yaml turns off: their exceptions are exactly the contract\'s', (t) => {
  for (const doc of [served, configured]) {
    // SPEC "Well-known discovery": the only paths with a trailing slash
    const slashed = Object.keys(doc.paths).filter((p) => p !== '/' && p.endsWith('/'));
    t.deepEqual(slashed.sort(), ['/.well-known/', '/.well-known/svc/']);
    // SPEC "Model-tool endpoint": GET /mcp is always 405; every other operation has a success
    const without2xx = Object.entries(doc.paths as Record<string, Record<string, any>>)
      .flatMap(([path, ops]) => Object.entries(ops).map(([m, o]) => [`${m.toUpperCase()} ${path}`, o] as const))
      .filter(([, o]) => !Object.keys(o.responses).some((code) => /^2(\d\d|XX)$/.test(code)))
      .map(([op]) => op);
    t.deepEqual(without2xx, ['GET /mcp']);
  }
});

test('servers: the configured public base URL, else the origin the document was fetched from', (t) => {
  t.deepEqual(configured.servers.map((x: { url: string }) => x.url), [CONFIGURED]);
  t.deepEqual(served.servers.map((x: { url: string }) => x.url), ['/']);
  t.true(served.tags.every((tag: { description?: string }) => (tag.description ?? '').length > 20));
});

test('every example validates against its schema, and every body has one', (t) => {
  const doc = served;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  for (const [name, schema] of Object.entries(doc.components.schemas)) {
    ajv.addSchema(schema as object, `#/components/schemas/${name}`);
  }
  const deref = (x: any): any =>
    (x?.$ref ? deref(x.$ref.split('/').slice(1).reduce((o: any, k: string) => o[k], doc)) : x);
  const check = (where: string, schema: unknown, media: any) => {
    const values = [
      ...('example' in media ? [['example', media.example]] : []),
      ...Object.entries(media.examples ?? {}).map(([k, e]) => [k, deref(e).value]),
    ];
    t.true(values.length > 0, `${where}: no example`);
    const valid = ajv.compile(schema as object);
    for (const [k, v] of values) t.true(valid(v), `${where} (${k}): ${ajv.errorsText(valid.errors)}`);
    return values.length;
  };
  let checked = 0;
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(ops)) {
      const at = `${method.toUpperCase()} ${path}`;
      for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
        checked += check(`${at} request ${type}`, (media as any).schema, media);
      }
      for (const [status, r] of Object.entries(op.responses)) {
        for (const [type, media] of Object.entries(deref(r).content ?? {})) {
          checked += check(`${at} ${status} ${type}`, (media as any).schema, media);
        }
      }
      for (const p of (op.parameters ?? []).map(deref)) {
        if ('example' in p) t.true(ajv.validate(p.schema, p.example), `${at} parameter ${p.name}`);
        else t.true(p.in !== 'path', `${at}: path parameter ${p.name} has no example`);
      }
    }
  }
  t.log(`${checked} examples validated`);
  t.true(checked > 300);
});
