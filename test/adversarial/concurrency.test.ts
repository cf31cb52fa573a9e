// Races on money: 50 concurrent quote→accept→execute flows on a machine funded for exactly N executions (HTTP,
// svc/1, and both mixed); 20 concurrent ACCEPTs of one quote; two funded machines sending one Idempotency-Key
// to ACCEPT_QUOTE, FUND_ACCOUNT and QUOTE each get their own reply. The ledger invariant holds after each.
import test, { type ExecutionContext } from 'ava';
import { SvcClient } from '../../src/client/client.ts';
import { fundMachine, type Svcd } from '../support/svcd.ts';
import { startSvcd, stopCheckingLedger } from '../support/start-svcd.ts';
import { viaEdge, viaHttp, type Outcome } from '../support/registry-call.ts';

type Surface = 'http' | 'edge';

/** One client's handles on a running svcd: HTTP from a loopback address, and svc/1 connections. */
interface Caller { s: Svcd; from: string; edges: SvcClient[] }

let turn = 0;
function call(c: Caller, via: Surface, cmd: string, args: Record<string, unknown>, token?: string,
  idempotencyKey?: string): Promise<Outcome> {
  if (via === 'http') {
    const headers: Record<string, string> = {};
    if (token) headers.authorization = `Bearer ${token}`;
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    return viaHttp(c.s.ready.http!, c.from, cmd, args, headers);
  }
  const a = idempotencyKey ? { ...args, idempotency_key: idempotencyKey } : args;
  return viaEdge(c.edges[turn++ % c.edges.length]!, cmd, a, token ? { token } : undefined);
}

async function caller(s: Svcd, from: string, connections = 4): Promise<Caller> {
  const edges = await Promise.all(Array.from({ length: connections }, () => SvcClient.connect({
    kind: 'tls', host: '127.0.0.1', port: s.edgePort, pin: s.ready.edge_cert_sha256, localAddress: from,
  })));
  return { s, from, edges };
}

async function balance(c: Caller, machine: string, token: string): Promise<{ available: bigint; reserved: bigint }> {
  const r = await call(c, 'edge', 'BALANCE', { machine_id: machine }, token);
  return { available: BigInt(r.body.available_units as string), reserved: BigInt(r.body.reserved_units as string) };
}

// An attest-event quote priced through its `bytes` dimension (the most it may send; the execution
// sends one byte): ~0.05 svcC, so 1 svcC buys about 19 of them
const QUOTE = { service: 'attest-event', bits: 64, bytes: 2_560_000 };
const FLOWS = 50;

/** A svcd with `machine` funded with 1 svcC, a caller from `source`, and the machine's credit. */
async function fundedCaller(t: ExecutionContext, machine: string, source: string) {
  const s = await startSvcd(t);
  const token = await fundMachine(s, machine, 1);
  const c = await caller(s, source);
  return { s, token, c, credit: (await balance(c, machine, token)).available };
}

/** `pick(i, step)` chooses the surface of flow i's quote (0), accept (1) and execute (2). */
async function raceFlows(t: ExecutionContext, pick: (i: number, step: number) => Surface): Promise<void> {
  const machine = 'race-flows';
  const { s, token, c, credit } = await fundedCaller(t, machine, '127.0.0.2');
  const probe = await call(c, 'edge', 'QUOTE', { ...QUOTE, machine_id: machine });
  const units = BigInt(probe.body.quote_units as number);
  const n = Number(credit / units);
  t.true(n > 0 && n < FLOWS, `the machine is funded for ${n} of ${FLOWS} executions`);

  const flows = await Promise.all(Array.from({ length: FLOWS }, async (_, i) => {
    const q = await call(c, pick(i, 0), 'QUOTE', { ...QUOTE, machine_id: machine });
    const id = q.body?.quote_id as string;
    const a = await call(c, pick(i, 1), 'ACCEPT_QUOTE', { quote_id: id, machine_id: machine }, token);
    const e = await call(c, pick(i, 2), 'ATTEST_EVENT', { quote_id: id, machine_id: machine, plain_hex: '00' }, token);
    return { q, a, e };
  }));
  t.true(flows.every((f) => f.q.status === 200 && BigInt(f.q.body.quote_units as number) === units), 'quotes');
  const accepted = flows.filter((f) => f.a.status === 200);
  const refused = flows.filter((f) => f.a.status !== 200);
  t.is(accepted.length, n, 'exactly N accepts');
  const refusals = [...new Set(refused.map((f) => `${f.a.status} ${f.a.code}`))];
  t.deepEqual(refusals, ['409 insufficient_balance'], 'the rest: 409 insufficient_balance');
  const receipts = flows.filter((f) => f.e.status === 200).map((f) => f.e.body.receipt_id as string);
  t.is(receipts.length, n, 'exactly N executions');
  t.is(new Set(receipts).size, n, 'N distinct receipts');
  t.true(accepted.every((f) => f.e.status === 200), 'every accepted quote executed');
  t.true(refused.every((f) => f.e.status === 409 && f.e.code === 'quote_not_accepted'), 'no refused quote executed');
  for (const id of receipts) {
    const v = await call(c, 'edge', 'VERIFY_RECEIPT', { receipt_id: id, machine_id: machine });
    t.true(v.body?.valid === true && v.body.receipt.units_charged === units.toString(), id);
  }
  t.deepEqual(await balance(c, machine, token), { available: credit - BigInt(n) * units, reserved: 0n });
  for (const e of c.edges) e.close();
  await stopCheckingLedger(s);
}

test('50 concurrent paid flows over HTTP: exactly N run, the rest 409 insufficient_balance', async (t) => {
  await raceFlows(t, () => 'http');
});

test('50 concurrent paid flows over svc/1: exactly N run, the rest 409 insufficient_balance', async (t) => {
  await raceFlows(t, () => 'edge');
});

test('50 concurrent paid flows mixing HTTP and svc/1 step by step: exactly N run', async (t) => {
  await raceFlows(t, (i, step) => ((i + step) % 2 ? 'http' : 'edge'));
});

// SPEC "States" rule 2: a second ACCEPT of an accepted quote is 409 quote_not_issued.
test('20 concurrent ACCEPTs of one issued quote: one 200, the rest 409, one reservation', async (t) => {
  const machine = 'race-accept';
  const { s, token, c, credit } = await fundedCaller(t, machine, '127.0.0.3');
  const q = await call(c, 'http', 'QUOTE', { ...QUOTE, machine_id: machine });
  const units = BigInt(q.body.quote_units as number);
  const args = { quote_id: q.body.quote_id, machine_id: machine };
  const all = await Promise.all(Array.from({ length: 20 }, (_, i) =>
    call(c, i % 2 ? 'http' : 'edge', 'ACCEPT_QUOTE', args, token)));
  t.deepEqual(await balance(c, machine, token), { available: credit - units, reserved: units }, 'reserved once');
  const wins = all.filter((r) => r.status === 200);
  t.is(wins.length, 1, `one accept wins: ${all.map((r) => r.status).join(',')}`);
  t.true(all.filter((r) => r.status !== 200).every((r) => r.status === 409 && r.code === 'quote_not_issued'),
    `the rest are 409 quote_not_issued: ${[...new Set(all.map((r) => `${r.status} ${r.code}`))].join(', ')}`);
  for (const e of c.edges) e.close();
  await stopCheckingLedger(s);
});

test('machines sharing an Idempotency-Key on ACCEPT_QUOTE, FUND_ACCOUNT, QUOTE get their own replies', async (t) => {
  const s = await startSvcd(t);
  const machines = { A: 'idem-a', B: 'idem-b' } as const;
  const tokens = { A: await fundMachine(s, machines.A, 2), B: await fundMachine(s, machines.B, 2) };
  const c = await caller(s, '127.0.0.4');
  const elsewhere = await caller(s, '127.0.0.5', 1);

  for (const via of ['http', 'edge'] as const) {
    const key = `shared-key-${via}`;
    const both = <T>(f: (who: 'A' | 'B') => Promise<T>) => Promise.all([f('A'), f('B')]);
    const own = (label: string, rs: Outcome[], field: string) => {
      const seen = rs.map((r) => `${r.status} ${r.code}`).join(', ');
      t.true(rs.every((r) => r.status === 200), `${via} ${label}: ${seen}`);
      t.is(rs[0]!.body.machine_id, machines.A, `${via} ${label}: A's reply names A`);
      t.is(rs[1]!.body.machine_id, machines.B, `${via} ${label}: B's reply names B`);
      t.not(rs[0]!.body[field], rs[1]!.body[field], `${via} ${label}: distinct ${field}`);
    };

    // QUOTE (no token: scoped by address and the machine named)
    const quote = (who: 'A' | 'B', from = c) =>
      call(from, via, 'QUOTE', { ...QUOTE, machine_id: machines[who] }, undefined, key);
    const quotes = await both((w) => quote(w));
    own('QUOTE', quotes, 'quote_id');
    const quoteAgain = await both((w) => quote(w));
    t.deepEqual(quoteAgain.map((r) => [r.body.quote_id, r.replayed]), quotes.map((r) => [r.body.quote_id, true]));
    const fromElsewhere = await quote('A', elsewhere);
    t.is(fromElsewhere.status, 200);
    const fresh = !quotes.some((r) => r.body.quote_id === fromElsewhere.body.quote_id);
    t.true(fresh, `${via}: the same key from another address makes a new quote`);

    // ACCEPT_QUOTE (scoped by the authenticated machine)
    const ids = { A: quotes[0]!.body.quote_id as string, B: quotes[1]!.body.quote_id as string };
    const accept = (who: 'A' | 'B', quoteId = ids[who]) =>
      call(c, via, 'ACCEPT_QUOTE', { quote_id: quoteId, machine_id: machines[who] }, tokens[who], key);
    const accepts = await both((w) => accept(w));
    own('ACCEPT_QUOTE', accepts, 'quote_id');
    t.deepEqual(accepts.map((r) => [r.body.quote_id, r.body.state]), [[ids.A, 'accepted'], [ids.B, 'accepted']]);
    const acceptAgain = await both((w) => accept(w));
    t.deepEqual(acceptAgain.map((r) => [r.body.quote_id, r.replayed]), [[ids.A, true], [ids.B, true]]);
    const crossed = await accept('B', ids.A);
    const crossing = `${via}: B's key on A's quote: ${crossed.status} ${crossed.code}`;
    t.true(crossed.status === 409 || crossed.status === 422, crossing);

    // FUND_ACCOUNT (claimed machines: scoped by the authenticated machine; no token handed out again)
    const fund = (who: 'A' | 'B') => call(c, via, 'FUND_ACCOUNT',
      { machine_id: machines[who], units: 1, network: 'Solana', asset: 'USDC' }, tokens[who], key);
    const invoices = await both(fund);
    own('FUND_ACCOUNT', invoices, 'invoice_id');
    t.true(invoices.every((r) => r.body.machine_token === undefined), `${via}: no token for a claimed machine`);
    const fundAgain = await both(fund);
    t.deepEqual(fundAgain.map((r) => [r.body.invoice_id, r.replayed]), invoices.map((r) => [r.body.invoice_id, true]));
  }
  for (const e of [...c.edges, ...elsewhere.edges]) e.close();
  await stopCheckingLedger(s);
});
