import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { ALL_COMMANDS, CAPABILITIES, COMMANDS, commandSpec } from '../../src/protocol/registry.ts';
import { SERVICES } from '../../src/protocol/services.ts';
import { VERSIONS } from '../../src/protocol/versions.ts';
import { testNeeding } from '../support/needs.ts';

// The contract's command table (SPEC "Commands"), typed here so the check runs without ../shared.
const CONTRACT: [name: string, group: string, access: string, http: string | null][] = [
  ['HELLO', 'Discovery', 'public', 'GET /api/v1/hello'],
  ['CAPS', 'Discovery', 'public', 'GET /api/v1/caps'],
  ['BALANCE', 'Finance', 'auth', 'POST /api/v1/balance'],
  ['QUOTE', 'Finance', 'public', 'POST /api/v1/quotes/*'],
  ['ACCEPT_QUOTE', 'Finance', 'auth', 'POST /api/v1/quotes/{quote_id}/accept'],
  ['GET_PULSE', 'Execution', 'paid', 'POST /api/v1/executions/get-pulse'],
  ['MAKE_BCT', 'Execution', 'paid', 'POST /api/v1/executions/make-bct'],
  ['VERIFY_BCT', 'Execution', 'paid', 'POST /api/v1/executions/verify-bct'],
  ['VERIFY_RESULT', 'Proof', 'paid', 'POST /api/v1/executions/verify-result'],
  ['ATTEST_EVENT', 'Proof', 'paid', 'POST /api/v1/executions/attest-event'],
  ['SUBMIT_ID', 'Identity', 'paid', 'POST /api/v1/executions/submit-id'],
  ['BVM_EXEC', 'Execution', 'paid', 'POST /api/v1/executions/bvm-exec'],
  ['SEALED_MESSAGE', 'Execution', 'paid', 'POST /api/v1/executions/sealed-message'],
  ['TIMESTAMP_PROOF', 'Proof', 'paid', 'POST /api/v1/executions/timestamp-proof'],
  ['MACHINE_EVENT_LOG', 'Proof', 'paid', 'POST /api/v1/executions/machine-event-log'],
  ['GET_RECEIPT', 'Receipt', 'reserved', null],
  ['VERIFY_RECEIPT', 'Receipt', 'public', 'POST /api/v1/receipts/verify'],
  ['FUND_ACCOUNT', 'Finance', 'auth', 'POST /api/v1/invoices'],
  ['INVOICE_STATUS', 'Finance', 'auth', 'GET /api/v1/invoices/{invoice_id}'],
  ['SETTLE_INVOICE', 'Admin', 'admin', null],
  ['RECOVER_RUNTIME', 'Admin', 'admin', null],
];
const CLI_FORMS = [
  'hello', 'caps', 'balance', 'quote-*', 'accept-quote',
  'get-pulse', 'make-bct', 'verify-bct', 'verify-result', 'attest-event',
  'submit-id', 'bvm-exec', 'sealed-message', 'timestamp-proof', 'machine-event-log',
  'get-receipt', 'verify-receipt', 'fund-account', 'invoice-status',
];

test('registry: exactly the contract\'s 21 commands, in order, with group, access and HTTP route', (t) => {
  t.is(COMMANDS.length, 21);
  t.is(CAPABILITIES.length, 21);
  t.deepEqual(COMMANDS.map((c) => c.name), CONTRACT.map((c) => c[0]));
  for (const [name, group, access, http] of CONTRACT) {
    const c = commandSpec(name)!;
    t.is(c.group as string, group, name); t.is(c.access as string, access, name);
    const route = c.http ? `${c.http.method} ${c.http.path.replace('{service}', '*')}` : null;
    t.is(route, http, name);
  }
});

test('registry: CLI forms are the contract\'s 19;'
  + ' only SETTLE_INVOICE and RECOVER_RUNTIME have neither HTTP nor CLI', (t) => {
  const forms = COMMANDS.flatMap((c) => (c.name === 'QUOTE' ? ['quote-*'] : c.cli));
  t.deepEqual(forms.sort(), [...CLI_FORMS].sort());
  t.is(commandSpec('QUOTE')!.cli.length, 10);
  t.deepEqual(
    COMMANDS.filter((c) => !c.http && c.cli.length === 0).map((c) => c.name),
    ['SETTLE_INVOICE', 'RECOVER_RUNTIME'],
  );
  t.deepEqual(
    COMMANDS.filter((c) => c.auth === 'admin').map((c) => c.name),
    ['SETTLE_INVOICE', 'RECOVER_RUNTIME'],
  );
  const auxAdmin = ALL_COMMANDS.filter((c) => !c.capability && c.auth === 'admin')
    .map((c) => [c.name, c.http, c.cli.length]);
  const expected = [
    ['ROTATE_TOKEN', null, 0], ['CREDIT_LATE_PAYMENT', null, 0], ['LIST_INVOICES', null, 0],
    ['UNMATCHED', null, 0], ['REORGS', null, 0], ['RESCAN', null, 0],
    ['WEBHOOKS', null, 0], ['RESEND_WEBHOOK', null, 0],
    ['DISMISS', null, 0], ['CLAIM', null, 0],
    ['BACKUP', null, 0], ['AUDIT', null, 0],
    ['ROTATE_NODE_KEY', null, 0],
  ];
  t.deepEqual(auxAdmin, expected, 'no HTTP or public CLI form');
});

test('registry: annotations follow the contract (billing, auth, rate class, execution flag)', (t) => {
  for (const c of COMMANDS) {
    if (c.group === 'Execution' || c.group === 'Proof' || c.group === 'Identity') {
      t.deepEqual([c.auth, c.rateClass, c.execution], ['required', 'paid_execution', true], c.name);
    } else {
      t.is(c.execution, false, c.name);
      t.is(c.rateClass, 'public_low', c.name);
    }
  }
  const paidRequired = ['VERIFY_RESULT', 'ATTEST_EVENT', 'SUBMIT_ID', 'BVM_EXEC'];
  for (const n of paidRequired) t.is(commandSpec(n)!.billing, 'paid_required');
  const paid = ['GET_PULSE', 'MAKE_BCT', 'VERIFY_BCT', 'SEALED_MESSAGE', 'TIMESTAMP_PROOF', 'MACHINE_EVENT_LOG'];
  for (const n of paid) t.is(commandSpec(n)!.billing, 'paid');
  for (const n of ['ACCEPT_QUOTE', 'FUND_ACCOUNT', 'INVOICE_STATUS']) {
    t.deepEqual([commandSpec(n)!.billing, commandSpec(n)!.auth], ['controlled', 'machine_context']);
  }
  t.deepEqual(
    SERVICES.map((s) => s.quoteBilling),
    ['free_limited', 'free_limited', 'free_limited', ...Array(7).fill('free_limited_quote')],
  );
  t.deepEqual(
    SERVICES.map((s) => commandSpec(s.command)!.http!.path),
    SERVICES.map((s) => `/api/v1/executions/${s.service}`),
  );
});

test('registry: every args and result schema compiles under JSON Schema 2020-12', (t) => {
  const ajv = new Ajv2020({ strict: true, allErrors: true, useDefaults: true });
  for (const c of ALL_COMMANDS) {
    t.notThrows(() => ajv.compile(c.args), `${c.name} args`);
    t.notThrows(() => ajv.compile(c.result), `${c.name} result`);
  }
});

// the contract: the repository's copy of it (test/contract/README.md), or SVC_SHARED_SPEC's
const specPath = process.env.SVC_SHARED_SPEC ?? fileURLToPath(new URL('../contract/SPEC.md', import.meta.url));
const spec = existsSync(specPath) ? specPath : null;
const specNeed = { what: 'the contract (test/contract/SPEC.md)', present: spec !== null, hint: 'set SVC_SHARED_SPEC' };
testNeeding(test, 'registry: the command table in the contract (SPEC.md) matches', specNeed, (t) => {
  const text = readFileSync(spec!, 'utf8');
  const rows = [...text.matchAll(/^\| ([A-Z_]+) \| (\w+) \| (\w+) \| ([^|]+) \| ([^|]+) \|$/gm)]
    .map((m) => [m[1], m[2], m[3], m[4]!.trim()]);
  t.is(rows.length, 21);
  for (const [name, group, access, http] of rows) {
    const c = commandSpec(name!)!;
    t.truthy(c, name);
    t.deepEqual([c.group, c.access], [group, access], name);
    if (http!.startsWith('GET ') || http!.startsWith('POST ')) {
      t.is(`${c.http!.method} ${c.http!.path.replace('{service}', '*')}`, http ?? '', name);
    } else {
      t.is(c.http, null, name);
    }
  }
  t.regex(text, /Commands \(21 in total/);
});

// the contract's Versioning table (SPEC "Versioning"), typed here: the registry's versions are checked against it
const VERSIONING: Record<string, string | number> = {
  'API version string': 'v1.0.5',
  'path prefix': '/api/v1',
  'discovery version': '1.0.5',
  'public client kit version': 'v1.0.5',
  'gateway version': '1.0.5',
  'MCP server version': '1.0.5',
  'core protocol': 'svc/1',
  'manifest format': 'svc_public_discovery_v1',
  'pricebook pointer format': 'svc_pricebook_pointer_v1',
  price_version: 'svcC_REF_USD_WORK_V6',
  quote_terms_version: 5,
  'capability count': 21,
};

test('version strings match the typed copy of the contract\'s Versioning table', (t) => {
  t.deepEqual(Object.values(VERSIONS), Object.values(VERSIONING));
});

testNeeding(test, 'version strings: the typed Versioning table is the one in the contract (SPEC.md)', specNeed, (t) => {
  const text = readFileSync(spec!, 'utf8');
  for (const [item, value] of Object.entries(VERSIONING)) {
    t.true(text.includes(`| ${item} | ${value} |`), `${item} = ${value} in SPEC.md`);
  }
});
