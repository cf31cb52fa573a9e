// Every code in the error catalogue (src/errors.ts) has a test that provokes it and asserts it. The
// table below names that test; this file fails when the catalogue gains a code without a row, when
// a row names a code the catalogue lost, and when the named test (its text up to the next top-level
// test of the file) no longer asserts its code.
// `surface` says how the code is reached: through HTTP or svc/1 against a real core, or (two codes
// only, each with its reason) at the kernel pool, below any surface.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ERRORS } from '../../src/errors.ts';

type Surface = 'http' | 'svc/1' | 'http+svc/1' | 'cli (svc/1 admin)' | 'pool';
const PROVOKED: Record<string, [file: string, title: string, surface: Surface]> = {
  invalid_request: ['test/gateway/api.test.ts', 'errors: ApiError with status and source', 'http'],
  bad_frame: ['test/core/edge.test.ts', 'edge: malformed frames get named errors', 'svc/1'],
  unsupported_version: ['test/core/edge.test.ts', 'edge: malformed frames get named errors', 'svc/1'],
  unknown_command: ['test/core/edge.test.ts', 'edge: malformed frames get named errors', 'svc/1'],
  line_too_long: ['test/core/edge.test.ts', 'edge: a line over 1 MiB gets line_too_long', 'svc/1'],
  unsupported_rail: ['test/gateway/api.test.ts', 'errors: ApiError with status and source', 'http'],
  payload_too_large: ['test/gateway/api.test.ts', 'errors: ApiError with status and source', 'http'],
  method_not_allowed: ['test/gateway/api.test.ts', '405 carries Allow', 'http'],
  request_timeout: ['test/adversarial/resources.test.ts', 'connections holding partial bodies', 'http'],
  unauthorized: ['test/core/flow.test.ts', '401: missing, wrong and foreign tokens', 'svc/1'],
  forbidden: ['test/core/edge.test.ts', 'admin commands: refused on the edge and the backend', 'svc/1'],
  not_found: ['test/gateway/api.test.ts', 'errors: ApiError with status and source', 'http'],
  payment_required: ['test/x402/pay.test.ts', 'the official x402 client pays for a pulse', 'http'],
  payment_invalid: ['test/x402/refusals.test.ts', 'payments that do not pay the quote: 402', 'http'],
  payment_failed: ['test/x402/settlement.test.ts', 'a settlement that reverts (the payer', 'http'],
  payment_pending: ['test/x402/settlement.test.ts', 'a settlement not yet deep enough', 'http'],
  payment_used: ['test/x402/exactly-once.test.ts', 'an authorization that paid one quote pays no other', 'http'],
  quote_expired: ['test/gateway/api.test.ts', 'errors: ApiError with status and source', 'http'],
  quote_not_issued: ['test/core/flow.test.ts', '404 and 409: unknown ids, wrong states', 'svc/1'],
  quote_not_accepted: ['test/core/flow.test.ts', '404 and 409: unknown ids, wrong states', 'svc/1'],
  quote_wrong_service: ['test/core/flow.test.ts', '404 and 409: unknown ids, wrong states', 'svc/1'],
  quote_wrong_machine: ['test/core/flow.test.ts', '404 and 409: unknown ids, wrong states', 'svc/1'],
  input_mismatch: ['test/core/flow.test.ts', '404 and 409: unknown ids, wrong states', 'svc/1'],
  execution_mismatch: ['test/core/flow.test.ts', 'GET_PULSE flow with the real CLIs', 'svc/1'],
  insufficient_balance: ['test/gateway/api.test.ts', 'errors: ApiError with status and source', 'http'],
  invoice_expired: ['test/core/invoices.test.ts', 'credit-late-payment credits an expired invoice', 'svc/1'],
  invoice_not_expired: ['test/core/invoices.test.ts', 'credit-late-payment credits an expired invoice', 'svc/1'],
  invoice_already_settled: ['test/core/flow.test.ts', 'GET_PULSE flow with the real CLIs', 'svc/1'],
  deposit_already_credited: [
    'test/watchers/unmatched.test.ts', 'unmatched: under- and over-payments and an unknown payer queue', 'svc/1',
  ],
  deposit_dismissed: [
    'test/watchers/unmatched.test.ts', 'unmatched: under- and over-payments and an unknown payer queue', 'svc/1',
  ],
  too_many_open_invoices: ['test/adversarial/money-semantics.test.ts', 'funding denial', 'svc/1'],
  idempotency_in_progress: ['test/core/flow.test.ts', 'idempotency keys: same body replays', 'svc/1'],
  idempotency_key_reused: ['test/gateway/api.test.ts', 'Idempotency-Key header', 'http'],
  rate_limited: ['test/errors/codes.test.ts', 'error code rate_limited', 'http+svc/1'],
  busy: ['test/adversarial/resources.test.ts', 'TLS connections holding partial lines', 'svc/1'],
  service_unavailable: ['test/ops/lifecycle.test.ts', 'GET /readyz: 200 while serving, 503 ApiError', 'http'],
  shutting_down: ['test/errors/codes.test.ts', 'error code shutting_down', 'http+svc/1'],
  // a job is cancelled when its client goes away or at shutdown: no reply reaches anyone to assert on
  cancelled: ['test/kernels/pool.test.ts', 'pool: a full queue fails fast with busy', 'pool'],
  // needs a kernel worker to crash, which no request can cause (that is the point of the kernels)
  kernel_failed: ['test/kernels/pool.test.ts', 'pool: a crashed worker is replaced', 'pool'],
  edge_unavailable: ['test/gateway/api.test.ts', '502 edge_unavailable', 'http'],
  internal: ['test/errors/codes.test.ts', 'error code internal', 'http+svc/1'],
};

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

test('error catalogue: every code has a row naming the test that provokes it, and no row is stale', (t) => {
  const codes = Object.keys(ERRORS).sort();
  const rows = Object.keys(PROVOKED).sort();
  t.deepEqual(codes.filter((c) => !rows.includes(c)), [], 'codes without a test: add one and a row here');
  t.deepEqual(rows.filter((c) => !codes.includes(c)), [], 'rows for codes the catalogue no longer has');
  const belowSurface = Object.entries(PROVOKED).filter(([, [, , s]]) => s === 'pool').map(([c]) => c);
  t.deepEqual(belowSurface.sort(), ['cancelled', 'kernel_failed'], 'only these two are not reached through a surface');
});

test('error catalogue: each named test exists and asserts its code', (t) => {
  for (const [code, [file, title]] of Object.entries(PROVOKED)) {
    const text = readFileSync(`${ROOT}${file}`, 'utf8');
    t.true(text.includes(title), `${file} has a test titled "${title}…"`);
    // the code as a literal in that test: from its title to the next top-level test of the file
    const start = text.indexOf(title);
    const next = /\n(test|test\.serial|testNeeding|sharedTest)\(/g;
    next.lastIndex = start;
    const end = next.exec(text)?.index ?? text.length;
    t.true(text.slice(start, end).includes(`'${code}'`), `${file}: the test "${title}…" asserts '${code}'`);
  }
});
