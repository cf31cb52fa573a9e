// The paid GET_PULSE flow end to end through the real TLS edge with the real `svc` and
// `svc-admin` binaries, the offline verification, and every 401/404/409 the flow can meet.
import test from 'ava';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliJson, fundMachine } from '../support/svcd.ts';
import { until } from '../support/until.ts';
import { ManualClock, fundCore, openCore } from '../support/core-fixture.ts';
import { sharedSvcd } from '../support/start-svcd.ts';
import { txRef } from '../support/references.ts';

const [SOL1, SOL2] = [txRef('sol-tx-1', 'USDT_SOLANA'), txRef('sol-tx-2', 'USDT_SOLANA')];

// the ledger invariant after every test that moved money: checked on the stopped data dir
const s = sharedSvcd(test, { SVC_PULSE_PERIOD_MS: '1500', SVC_SWEEP_INTERVAL_MS: '100' },
  { args: ['core'], checkLedger: true });

test.serial('GET_PULSE flow with the real CLIs: ' +
  'fund → settle → balance → quote → accept → execute → receipt → verify offline', async (t) => {
  const m = ['--machine-id', 'cli-machine'];
  const fund = await s.svc([...m, '--json', 'fund-account', '--units', '3', '--network', 'Solana', '--asset', 'USDT']);
  t.is(fund.code, 0, fund.stderr);
  const inv = cliJson(fund);
  t.regex(inv.machine_token, /^svcm_[A-Za-z0-9_-]{43}$/);
  t.is(inv.rail, 'USDT_SOLANA');
  t.true(BigInt(inv.amount_due) > 3_000_000n && BigInt(inv.amount_due) < 3_100_000n, 'unique suffix below 0.10');
  const credit = BigInt(inv.amount_due) * 100n; // the payer is credited exactly what the invoice asks
  const cred = join(s.dataDir, 'cli-credentials.json');
  t.is(statSync(cred).mode & 0o777, 0o600);
  t.regex(fund.stderr, /saved to .* \(mode 0600\)/);

  const pending = cliJson(await s.svc([...m, '--json', 'invoice-status', inv.invoice_id]));
  t.is(pending.state, 'pending');
  t.is(pending.machine_token, undefined, 'the token is returned once');
  const settled = await s.svcAdmin(['--json', 'settle-invoice', inv.invoice_id, '--reference', SOL1]);
  t.is(settled.code, 0, settled.stderr);
  t.is(cliJson(settled).state, 'settled');
  const again = cliJson(await s.svcAdmin(['--json', 'settle-invoice', inv.invoice_id, '--reference', SOL1]));
  t.is(again.state, 'settled', 'settling twice with the same reference credits once');
  const other = await s.svcAdmin(['--json', 'settle-invoice', inv.invoice_id, '--reference', SOL2]);
  t.is(other.code, 1, 'another reference for a settled invoice is refused, not a silent success');
  t.is(cliJson(other).error.code, 'invoice_already_settled');
  t.regex(cliJson(other).error.message, new RegExp(`already settled with reference "${SOL1}"`));

  const bal = cliJson(await s.svc([...m, '--json', 'balance']));
  t.deepEqual([bal.available_units, bal.reserved_units], [String(credit), '0']);

  const quote = cliJson(await s.svc([...m, '--json', 'quote-get-pulse', '--bits', '1001']));
  t.is(quote.state, 'issued');
  t.is(quote.price_version, 'svcC_REF_USD_WORK_V6');
  t.is(quote.quote_terms_version, 5);
  const accepted = cliJson(await s.svc([...m, '--json', 'accept-quote', quote.quote_id]));
  t.is(accepted.state, 'accepted');
  const held = cliJson(await s.svc([...m, '--json', 'balance']));
  t.is(BigInt(held.reserved_units), BigInt(quote.quote_units));

  const exec = await s.svc([...m, '--json', 'get-pulse', quote.quote_id]);
  t.is(exec.code, 0, exec.stderr);
  const result = cliJson(exec);
  t.is(result.output_hex.length, 252, '1001 bits = 126 bytes');
  t.is(parseInt(result.output_hex.slice(-2), 16) & 0x7f, 0, 'the 7 unused bits of the last byte are zero');
  t.regex(result.receipt_id, /^rcpt_/);
  t.regex(result.result_tag, /^[0-9a-f]{64}$/);
  const after = cliJson(await s.svc([...m, '--json', 'balance']));
  t.deepEqual([BigInt(after.available_units), after.reserved_units], [credit - BigInt(quote.quote_units), '0']);

  const replay = cliJson(await s.svc([...m, '--json', 'get-pulse', quote.quote_id]));
  t.is(replay.receipt_id, result.receipt_id, 'repeating the same execution returns the stored result');
  t.true(replay.replayed);
  const bits = await s.svc([...m, '--json', 'get-pulse', quote.quote_id, '--bits', '8']);
  t.is(bits.code, 1);
  t.is(cliJson(bits).error.code, 'execution_mismatch');

  const rec = cliJson(await s.svc([...m, '--json', 'get-receipt', result.receipt_id]));
  t.is(rec.receipt.quote_id, quote.quote_id);
  t.is(rec.receipt.units_charged, String(quote.quote_units));
  t.true(rec.valid);
  const ver = cliJson(await s.svc([...m, '--json', 'verify-receipt', result.receipt_id]));
  t.true(ver.valid);

  // offline verification: wait for the next pulse to reveal the seed
  const resultFile = join(s.dataDir, 'pulse-result.json');
  writeFileSync(resultFile, JSON.stringify(result));
  // only "not revealed yet" (not_found) is waited out: any other failure ends the wait and fails below
  const v = await until('the next pulse reveals the seed', async () => {
    const x = await s.svc(['--json', 'verify-pulse', '--fetch', '--result', resultFile]);
    return (x.code === 0 || cliJson(x).error.code !== 'not_found') && x;
  }, { every: 250 });
  t.is(v.code, 0, v.stdout + v.stderr);
  t.true(cliJson(v).verified);
  const tampered = join(s.dataDir, 'pulse-result-bad.json');
  const flip = (c: string) => (c === '0' ? '1' : '0');
  writeFileSync(tampered, JSON.stringify({ ...result, output_hex: result.output_hex.replace(/^./, flip) }));
  const bad = await s.svc(['--json', 'verify-pulse', '--fetch', '--result', tampered]);
  t.is(bad.code, 1);
  t.regex(cliJson(bad).error.message, /recomputed output = output_hex/);
});

test.serial('401: missing, wrong and foreign tokens; unclaimed machines', async (t) => {
  const tokenA = await fundMachine(s, 'auth-a', 1);
  const tokenB = await fundMachine(s, 'auth-b', 1);
  const c = await s.edge();
  const cases: [string, Record<string, unknown>, any][] = [
    ['BALANCE', { machine_id: 'auth-a' }, undefined],
    ['BALANCE', { machine_id: 'auth-a' }, { token: 'svcm_wrong' }],
    ['BALANCE', { machine_id: 'auth-a' }, { token: tokenB }],
    ['BALANCE', { machine_id: 'auth-a' }, { machine_id: 'auth-b', token: tokenA }],
    ['BALANCE', { machine_id: 'never-funded' }, { token: tokenA }],
    ['FUND_ACCOUNT', { machine_id: 'auth-a', units: 1, network: 'TRON', asset: 'USDT' }, undefined],
    ['INVOICE_STATUS', { machine_id: 'auth-a', invoice_id: 'inv_x' }, undefined],
    ['ACCEPT_QUOTE', { machine_id: 'auth-a', quote_id: 'q_x' }, { token: tokenB }],
    ['GET_PULSE', { machine_id: 'auth-a', quote_id: 'q_x' }, undefined],
    ['GET_RECEIPT', { machine_id: 'auth-a', receipt_id: 'rcpt_x' }, { token: 'nope' }],
  ];
  for (const [cmd, args, auth] of cases) {
    const e = await t.throwsAsync(c.request(cmd, args, auth));
    t.is((e as any).code, 'unauthorized', `${cmd} ${JSON.stringify(auth)}`);
  }
  // the CLI maps it to exit 1 with the code printed
  const r = await s.svc(['--machine-id', 'auth-a', 'balance'], { SVC_MACHINE_TOKEN: 'svcm_bad' });
  t.is(r.code, 1);
  t.regex(r.stderr, /^error: unauthorized: /);
  // rotation: the old token stops working, the new one works
  const rot = await s.svcAdmin(['--json', 'rotate-token', 'auth-a']);
  const fresh = cliJson(rot).machine_token;
  const stale = await t.throwsAsync(c.request('BALANCE', { machine_id: 'auth-a' }, { token: tokenA }));
  t.is((stale as any).code, 'unauthorized');
  const rotated = await c.request('BALANCE', { machine_id: 'auth-a' }, { token: fresh });
  t.regex(rotated.available_units as string, /^10[0-9]{7}$/);
  c.close();
});

test.serial('404 and 409: unknown ids, wrong states, wrong machine, wrong service, balance, rails', async (t) => {
  const tok = await fundMachine(s, 'st-a', 1);
  const tokB = await fundMachine(s, 'st-b', 1);
  const c = await s.edge();
  const a = await s.admin();
  const code = async (p: Promise<unknown>) => ((await t.throwsAsync(p)) as any).code;
  const auth = { token: tok };
  t.is(await code(c.request('ACCEPT_QUOTE', { quote_id: 'q_missing', machine_id: 'st-a' }, auth)), 'not_found');
  t.is(await code(c.request('GET_PULSE', { quote_id: 'q_missing', machine_id: 'st-a' }, auth)), 'not_found');
  t.is(await code(c.request('INVOICE_STATUS', { invoice_id: 'inv_missing', machine_id: 'st-a' }, auth)), 'not_found');
  t.is(await code(c.request('VERIFY_RECEIPT', { receipt_id: 'rcpt_missing', machine_id: 'st-a' })), 'not_found');
  t.is(await code(a.request('SETTLE_INVOICE', { invoice_id: 'inv_missing', reference: 'r' })), 'not_found');
  t.is(await code(c.request('PULSE', { index: 999999 })), 'not_found');

  const q = await c.request('QUOTE', { service: 'get-pulse', machine_id: 'st-a', bits: 64 });
  t.is(await code(c.request('GET_PULSE', { quote_id: q.quote_id, machine_id: 'st-a' }, auth)), 'quote_not_accepted');
  t.is(await code(c.request('ACCEPT_QUOTE', { quote_id: q.quote_id, machine_id: 'st-b' }, { token: tokB })),
    'quote_wrong_machine');
  await c.request('ACCEPT_QUOTE', { quote_id: q.quote_id, machine_id: 'st-a' }, auth);
  const twice = await t.throwsAsync(c.request('ACCEPT_QUOTE', { quote_id: q.quote_id, machine_id: 'st-a' }, auth));
  t.deepEqual([(twice as any).code, (twice as any).details], ['quote_not_issued', { state: 'accepted' }], 'again: 409');
  t.is((await c.request('BALANCE', { machine_id: 'st-a' }, auth)).reserved_units, String(q.quote_units));
  t.is(await code(c.request('MAKE_BCT', { quote_id: q.quote_id, machine_id: 'st-a', plain_hex: '00' }, auth)),
    'quote_wrong_service');
  t.is(await code(c.request('GET_PULSE', { quote_id: q.quote_id, machine_id: 'st-a', bits: 65 }, auth)),
    'input_mismatch');
  await c.request('GET_PULSE', { quote_id: q.quote_id, machine_id: 'st-a' }, auth);
  t.is(await code(c.request('ACCEPT_QUOTE', { quote_id: q.quote_id, machine_id: 'st-a' }, auth)), 'quote_not_issued');

  // a quote bigger than the balance
  const big = await c.request('QUOTE', { service: 'bvm-exec', machine_id: 'st-a', bytes: 1 << 30 });
  t.is(await code(c.request('ACCEPT_QUOTE', { quote_id: big.quote_id, machine_id: 'st-a' }, auth)),
    'insufficient_balance');
  // digest-bound input: only the quoted plaintext may be sealed
  const bct = await c.request('QUOTE', { service: 'make-bct', machine_id: 'st-a', plain_hex: '68656c6c6f' });
  await c.request('ACCEPT_QUOTE', { quote_id: bct.quote_id, machine_id: 'st-a' }, auth);
  t.is(await code(c.request('MAKE_BCT', { quote_id: bct.quote_id, machine_id: 'st-a', plain_hex: '00' }, auth)),
    'input_mismatch');
  t.is(await code(c.request('MAKE_BCT', { quote_id: bct.quote_id, machine_id: 'st-a' }, auth)), 'invalid_request');
  // a service this node does not execute yet: the reservation stays until the quote expires
  // size-bound input: never more than the quoted bytes; a malformed input is refused uncharged
  const ts = await c.request('QUOTE', { service: 'timestamp-proof', machine_id: 'st-a', bytes: 32 });
  await c.request('ACCEPT_QUOTE', { quote_id: ts.quote_id, machine_id: 'st-a' }, auth);
  const tsQuote = { quote_id: ts.quote_id, machine_id: 'st-a' };
  t.is(await code(c.request('TIMESTAMP_PROOF', { ...tsQuote, plain_hex: '00'.repeat(33) }, auth)),
    'input_mismatch', 'more than the quoted bytes');
  t.is(await code(c.request('TIMESTAMP_PROOF', { ...tsQuote, plain_hex: '00'.repeat(31) }, auth)),
    'invalid_request', 'not a digest');
  t.is(await code(c.request('TIMESTAMP_PROOF', { ...tsQuote, plain_hex: '00'.repeat(32), packet_hex: '00' }, auth)),
    'invalid_request', 'not an input of timestamp-proof');

  // rails and invoices
  t.is(await code(c.request('FUND_ACCOUNT', { machine_id: 'st-a', units: 1, network: 'TRON', asset: 'USDC' }, auth)),
    'unsupported_rail');
  t.is(await code(c.request('FUND_ACCOUNT', { machine_id: 'st-a', units: 1, network: 'Base', asset: 'USDT' }, auth)),
    'unsupported_rail');
  t.is(await code(c.request('FUND_ACCOUNT', { machine_id: 'st-a', units: 0, network: 'Base', asset: 'USDC' }, auth)),
    'invalid_request');
  const inv = await c.request('FUND_ACCOUNT', { machine_id: 'st-a', units: 1, network: 'Base', asset: 'USDC' }, auth);
  t.is(await code(c.request('INVOICE_STATUS', { invoice_id: inv.invoice_id, machine_id: 'st-b' }, { token: tokB })),
    'not_found', 'another machine cannot see it');
  c.close(); a.close();
});

test('a quote that expires before accept is refused; one that expires after accept releases its reservation',
  async (t) => {
    // the real Core on a clock the test moves: expiry at its exact millisecond, no sleeping; the
    // sweeper runs on its real 50 ms timer and reads the same clock
    const clock = new ManualClock();
    const core = await openCore(t, { SVC_SWEEP_INTERVAL_MS: '50' }, { clock });
    const tok = await fundCore(core, 'exp-a', 1);
    const auth = { token: tok };
    const call = (cmd: string, args: Record<string, unknown>) => core.handle(cmd, args, auth, 'gateway');
    const codeOf = (p: Promise<unknown>) => p.then(() => 'ok', (e: { code: string }) => e.code);
    const funded = (await call('BALANCE', { machine_id: 'exp-a' })).available_units;
    const quote = { service: 'get-pulse', machine_id: 'exp-a', bits: 64, quote_ttl_ms: 1000 };
    const q1 = await core.handle('QUOTE', quote, undefined, 'gateway');
    clock.advance(1000);
    t.is(await codeOf(call('ACCEPT_QUOTE', { quote_id: q1.quote_id, machine_id: 'exp-a' })), 'quote_expired');

    const q2 = await core.handle('QUOTE', quote, undefined, 'gateway');
    clock.advance(999);
    await call('ACCEPT_QUOTE', { quote_id: q2.quote_id, machine_id: 'exp-a' });
    t.is((await call('BALANCE', { machine_id: 'exp-a' })).reserved_units, String(q2.quote_units), 'accepted at 999 ms');
    // the sweeper releases it without anyone touching the quote, once the clock passes its expiry
    clock.advance(1000);
    const bal = await until('the sweeper releases the reservation', async () => {
      const now = await call('BALANCE', { machine_id: 'exp-a' });
      return now.reserved_units === '0' && now;
    });
    t.deepEqual([bal.available_units, bal.reserved_units], [funded, '0']);
    t.is(await codeOf(call('GET_PULSE', { quote_id: q2.quote_id, machine_id: 'exp-a' })), 'quote_expired');
    t.true((await core.ctx.ledger.verify()).ok);
  });

test.serial('idempotency keys: same body replays, another body is 422', async (t) => {
  const c = await s.edge();
  const args = { service: 'get-pulse', machine_id: 'idem-m', bits: 128, idempotency_key: 'k-1' };
  const first = await c.request('QUOTE', args);
  const second = await c.request('QUOTE', args);
  t.is(second.quote_id, first.quote_id);
  t.true(second.idempotent_replayed as boolean);
  t.is(((await t.throwsAsync(c.request('QUOTE', { ...args, bits: 256 }))) as any).code, 'idempotency_key_reused');
  // ten at once with a fresh key: one runs, the others are told it is in progress or replay it
  const burst = await Promise.allSettled(
    Array.from({ length: 10 }, () => c.request('QUOTE', { ...args, idempotency_key: 'k-2' })),
  );
  const made = burst.filter((r): r is PromiseFulfilledResult<Record<string, unknown>> => r.status === 'fulfilled');
  t.is(new Set(made.map((r) => r.value.quote_id)).size, 1, 'one quote, however many arrived together');
  t.true(burst.every((r) => r.status === 'fulfilled' || (r.reason as any).code === 'idempotency_in_progress'));
  c.close();
});
