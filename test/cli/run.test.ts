// `svc run`, request ids, --verbose and the verifiers' output, against a real svcd: run quotes, accepts
// and executes in one command, and a failed step is named with what it left behind; every error the node
// answered prints its request id, and -v logs each frame with the tokens redacted; verify-pulse given
// its files never connects (a node that is down changes nothing), online only with --fetch; verdicts
// print one check a line.
import test, { type ExecutionContext } from 'ava';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConnectionError } from '../../src/client/client.ts';
import { LostRequest, failureOf } from '../../src/cli/output.ts';
import { redacted } from '../../src/cli/wire-log.ts';
import { sharedSvcd } from '../support/start-svcd.ts';
import { BIN, cliJson, fundMachine, runBin } from '../support/svcd.ts';
import { until } from '../support/until.ts';
import { freePort } from '../support/postgres.ts';

// short pulse periods: the seed a GET_PULSE output needs is revealed soon
const s = sharedSvcd(test, { SVC_PULSE_PERIOD_MS: '300' }, { args: ['core'] });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
type Out = { code: number; stdout: string; stderr: string };

/** svc against the test's svcd as `machine`, its token from SVC_MACHINE_TOKEN. */
const as = (machine: string, token: string) => (args: string[]) =>
  s.svc(['--machine-id', machine, ...args], { SVC_MACHINE_TOKEN: token });

/** The one JSON failure under --json, with its request id checked. */
function failure(t: ExecutionContext, r: Out): { request_id: string; error: Record<string, unknown> } {
  t.is(r.stdout, '');
  const v = JSON.parse(r.stderr) as { request_id: string; error: Record<string, unknown> };
  t.regex(v.request_id, UUID);
  return v;
}

test('svc run quotes, accepts and executes in one command; --json prints the execution\'s reply', async (t) => {
  const svc = as('run-ok', await fundMachine(s, 'run-ok', 5));
  const human = await svc(['run', 'get-pulse', '--bits', '256']);
  t.is(human.code, 0, human.stderr);
  t.regex(human.stdout, /^receipt_id: rcpt_/m);
  t.regex(human.stdout, /^output_hex: [0-9a-f]{64}$/m);
  t.regex(human.stderr, /^quote q1\S+: \d+ units, expires \S+$/m);
  t.regex(human.stderr, /^accepted: \d+ units reserved$/m);
  const json = await svc(['--json', 'run', 'get-pulse', '--bits', '256']);
  const r = cliJson(json);
  t.like(r, { service: 'get-pulse', bits: 256, machine_id: 'run-ok' });
  t.regex(r.receipt_id, /^rcpt_/);
  t.is(json.stderr, '', 'under --json only the result');
  const receipt = await svc(['--json', 'verify-receipt', r.receipt_id]);
  t.true(cliJson(receipt).valid, receipt.stdout);
  // the quote binds the input itself (make-bct) or its size (attest-event)
  const bct = await svc(['--json', 'run', 'make-bct', '--plain-hex', '68656c6c6f']);
  t.is(bct.code, 0, bct.stderr);
  t.regex(cliJson(bct).receipt_id, /^rcpt_/);
  const event = await svc(['--json', 'run', 'attest-event', '--plain-hex', '00112233']);
  t.is(event.code, 0, event.stderr);
  const balance = cliJson(await svc(['--json', 'balance']));
  t.is(balance.reserved_units, '0', 'every reservation was charged');
});

test('svc run names the step that failed, with its request id and what the step left behind', async (t) => {
  const token = await fundMachine(s, 'run-steps', 5);
  const svc = as('run-steps', token);
  // step 1: the quote refuses the input's size (a timestamp proof takes a 32-byte digest)
  const quote = failure(t, await svc(['--json', 'run', 'timestamp-proof', '--plain-hex', '00']));
  t.like(quote.error, { code: 'invalid_request', source: 'svc', step: 'quote' });
  t.regex(String(quote.error.message), /^quote \(step 1 of 3\) failed: /);
  // step 2: a machine without a token, and one without a balance
  const stranger = await s.svc(['--machine-id', 'run-stranger', 'run', 'get-pulse', '--bits', '256']);
  t.is(stranger.code, 1);
  t.regex(stranger.stderr, /^error: unauthorized: accept-quote \(step 2 of 3\) failed: /m);
  t.regex(stranger.stderr, /^request id: [0-9a-f-]{36}$/m);
  t.regex(stranger.stderr, /^hint: no valid token for run-stranger: .*SVC_MACHINE_TOKEN; nothing was reserved/m);
  const c = await s.edge();
  const unpaid = await c.request('FUND_ACCOUNT', { machine_id: 'run-broke', units: 1, network: 'TRON', asset: 'USDT' });
  c.close();
  const broke = failure(t, await as('run-broke', unpaid.machine_token as string)(['--json', 'run', 'get-pulse']));
  t.like(broke.error, { code: 'insufficient_balance', step: 'accept' });
  t.regex(String(broke.error.quote_id), /^q1/);
  t.regex(String(broke.error.hint), /fund run-broke first/);
  // step 3: the execution refuses the input (not the JSON summary a machine event log takes)
  const exec = failure(t, await svc(['--json', 'run', 'machine-event-log', '--plain-hex', '00']));
  t.like(exec.error, { code: 'invalid_request', step: 'execute' });
  t.regex(String(exec.error.message), /^machine-event-log \(step 3 of 3\) failed: plain_hex must be UTF-8 JSON/);
  const quoteId = String(exec.error.quote_id);
  t.regex(String(exec.error.hint), new RegExp(`stays accepted.*svc machine-event-log ${quoteId} and the same input`));
  t.not(cliJson(await svc(['--json', 'balance'])).reserved_units, '0', 'the accepted quote holds its units');
  // usage errors are caught before anything is sent
  for (const args of [['run', 'make-bct'], ['run', 'attest-event', '--plain-hex', 'zz'], ['run'], ['run', 'frob']]) {
    const r = await svc(args);
    t.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
  }
  const noMachine = await s.svc(['run', 'get-pulse'], { SVC_MACHINE_ID: '' });
  t.is(noMachine.code, 2);
});

test('errors the node answered print the request id; -v logs every frame on stderr, tokens redacted', async (t) => {
  const refused = await s.svc(['--machine-id', 'rid-nobody', 'balance']);
  t.is(refused.code, 1);
  const id = /^request id: (\S+)$/m.exec(refused.stderr)?.[1];
  t.regex(id ?? '', UUID, refused.stderr);
  t.is(failure(t, await s.svc(['--json', '--machine-id', 'rid-nobody', 'balance'])).error.code, 'unauthorized');

  // the id printed is the frame id the reply answered, as the wire log shows it
  const verbose = await s.svc(['-v', '--machine-id', 'rid-nobody', 'balance'], { SVC_MACHINE_TOKEN: 'a-secret-token' });
  const printed = /^request id: (\S+)$/m.exec(verbose.stderr)![1]!;
  t.regex(verbose.stderr, /^\* connecting to 127\.0\.0\.1:\d+ \(TLS, pinned [0-9a-f]{64}\)$/m);
  t.true(verbose.stderr.includes(`> {"v":"svc/1","id":"${printed}","cmd":"BALANCE"`), verbose.stderr);
  t.true(verbose.stderr.includes(`< {"id":"${printed}","ok":false,"error":{"code":"unauthorized"`));
  t.true(verbose.stderr.includes('"token":"[redacted]"'));
  t.false(verbose.stderr.includes('a-secret-token'), 'the token never reaches the log');

  // a machine token in a reply is redacted in the log, and still printed as the result (once, as before)
  const fund = await s.svc(['-v', '--json', '--machine-id', 'rid-fund', 'fund-account', '--units', '1', '--network',
    'TRON', '--asset', 'USDT']);
  t.is(fund.code, 0, fund.stderr);
  const token = JSON.parse(fund.stdout).machine_token as string;
  t.false(fund.stderr.includes(token));
  t.regex(fund.stderr, /"machine_token":"\[redacted\]"/);

  // svc-admin sends ids of its own too
  const admin = await s.svcAdmin(['--json', 'settle-invoice', 'inv_none', '--reference', 'ab'.repeat(32) + ':0']);
  t.is(admin.code, 1);
  t.regex(JSON.parse(admin.stderr).request_id, UUID);
});

test('redaction and a request lost in flight, as the CLI reports them', (t) => {
  t.deepEqual(redacted({ auth: { token: 't' }, result: [{ machine_token: 'm', idempotency_key: 'k' }], n: 1 }),
    { auth: { token: '[redacted]' }, result: [{ machine_token: '[redacted]', idempotency_key: 'k' }], n: 1 });
  const f = failureOf(new LostRequest(new ConnectionError('connection closed'), 'req-1'));
  t.like(f, { exit: 3, code: 'connection_failed', request_id: 'req-1' });
  t.regex(String(f.hint), /may have run/);
});

/** A GET_PULSE result in `dir`, its pulse and the next as `svc --json pulse` prints them, and the node key. */
async function pulseFiles(t: ExecutionContext, dir: string) {
  const svc = as('verify-off', await fundMachine(s, 'verify-off', 2));
  const run = await svc(['--json', 'run', 'get-pulse', '--bits', '128']);
  t.is(run.code, 0, run.stderr);
  const result = join(dir, 'result.json');
  writeFileSync(result, run.stdout);
  const k = cliJson(run).pulse.index as number;
  const next = await until('the next pulse reveals the seed', async () => {
    const r = await s.svc(['--json', 'pulse', String(k + 1)]);
    return r.code === 0 && r;
  }, { every: 100 });
  const [pulse, reveal] = [join(dir, 'pk.json'), join(dir, 'pk1.json')];
  writeFileSync(pulse, (await s.svc(['--json', 'pulse', String(k)])).stdout);
  writeFileSync(reveal, next.stdout);
  const key = cliJson(await s.svc(['--json', 'hello'])).edge_proof.public_key as string;
  return { result, pulse, reveal, key };
}

test('verify-pulse given its files never connects: a node that is down changes nothing', async (t) => {
  const f = await pulseFiles(t, s.dataDir);
  const down = ['--edge', `127.0.0.1:${await freePort()}`];
  const files = ['--pulse', f.pulse, '--reveal', f.reveal, '--public-key', f.key];
  const offline = ['verify-pulse', '--result', f.result, ...files];
  const ok = await runBin(BIN.svc, [...down, ...offline]);
  t.is(ok.code, 0, ok.stderr);
  const lines = ok.stdout.trim().split('\n');
  t.is(lines[0], `${f.result}:`);
  t.true(lines.slice(1, -1).every((l) => /^ {2}ok {3}\S/.test(l)), ok.stdout);
  t.regex(lines.at(-1)!, new RegExp(`^verified: all ${lines.length - 2} checks passed$`));
  t.true(lines.includes('  ok   recomputed output = output_hex'));
  const json = await runBin(BIN.svc, [...down, '--json', ...offline]);
  t.like(JSON.parse(json.stdout), { verified: true });
  t.true((JSON.parse(json.stdout).checks as string[]).every((c) => c.startsWith('ok ')), 'the JSON is as before');

  // a changed output fails, node up or down: exit 1, every check on its line
  const result = JSON.parse(readFileSync(f.result, 'utf8'));
  const bad = join(s.dataDir, 'bad.json');
  writeFileSync(bad, JSON.stringify({ ...result, output_hex: result.output_hex.replace(/^./, (c: string) =>
    (c === '0' ? '1' : '0')) }));
  const tampered = ['verify-pulse', '--result', bad, ...files];
  const failed = await runBin(BIN.svc, [...down, ...tampered]);
  t.is(failed.code, 1, failed.stderr);
  t.regex(failed.stderr, /^ {2}FAIL recomputed output = output_hex$/m);
  t.regex(failed.stderr, /^ {2}ok {3}SHA-256\(revealed seed\) = commit of pulse k$/m);
  t.is((await s.svc(tampered)).code, 1, 'the same with the node up');

  // without the files it is no longer offline: a usage error naming --fetch, also with the node down
  const partial = await runBin(BIN.svc, [...down, 'verify-pulse', '--result', f.result, '--pulse', f.pulse]);
  t.is(partial.code, 2);
  t.regex(partial.stderr, /offline, verify-pulse needs --reveal, --public-key .*or --fetch/);
  const fetched = await s.svc(['verify-pulse', '--fetch', '--result', f.result]);
  t.is(fetched.code, 0, fetched.stderr);
  t.is((await runBin(BIN.svc, [...down, 'verify-pulse', '--fetch', '--result', f.result])).code, 3);
});

test('verify-log prints one check a line', async (t) => {
  const svc = as('verify-log', await fundMachine(s, 'verify-log', 2));
  const ts = await svc(['--json', 'run', 'timestamp-proof', '--plain-hex', 'ab'.repeat(32)]);
  t.is(ts.code, 0, ts.stderr);
  const file = join(s.dataDir, 'ts.json');
  writeFileSync(file, ts.stdout);
  const r = await runBin(BIN.svc, ['verify-log', '--result', file]);
  t.is(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  t.true(lines.length >= 4, r.stdout);
  t.true(lines.slice(1, -1).every((l) => /^ {2}ok {3}\S/.test(l)), r.stdout);
  t.regex(lines.at(-1)!, /^verified: all \d+ checks passed$/);
});
