// Every command the registry marks machine_context or required, over HTTP (where it has a route) and svc/1:
// no token, a wrong one, or another funded machine's → 401/403 in the surface's error shape, and the victim's
// balance, invoice, quotes and receipt are as before; the attacker's own token on the victim's objects → 404/409.
import test, { type ExecutionContext } from 'ava';
import { SvcClient } from '../../src/client/client.ts';
import { ALL_COMMANDS, type CommandSpec } from '../../src/protocol/registry.ts';
import { serviceOf } from '../../src/protocol/services.ts';
import { fundMachine, type Svcd } from '../support/svcd.ts';
import { startSvcd, stopCheckingLedger } from '../support/start-svcd.ts';
import { viaEdge, viaHttp, type Outcome } from '../support/registry-call.ts';

const AUTHED: readonly CommandSpec[] = ALL_COMMANDS
  .filter((c) => c.auth === 'machine_context' || c.auth === 'required');
const VICTIM = 'authz-victim';
const ATTACKER = 'authz-attacker';
const HEX = '00'.repeat(16);
const WRONG = `svcm_${'A'.repeat(43)}`;
/** The attacker speaks from its own loopback address; the victim from 127.0.0.1. */
const ATTACKER_ADDR = '127.0.0.66';

interface Victim {
  token: string;
  invoiceId: string;
  receiptId: string;
  issuedQuote: string;
  /** execution command → a quote for its service, accepted by the victim */
  accepted: Map<string, string>;
  /** QUOTE bodies (with idempotency keys): replaying one shows that quote's present state */
  quoteBodies: Record<string, unknown>[];
}

function denied(t: ExecutionContext, r: Outcome, label: string): void {
  t.true(r.status === 401 || r.status === 403, `${label}: status ${r.status} ${JSON.stringify(r.body)}`);
  t.true(r.code === 'unauthorized' || r.code === 'forbidden', `${label}: code ${r.code}`);
  t.is(typeof r.body?.error?.message, 'string', `${label}: message`);
}

function deniedHttp(t: ExecutionContext, r: Outcome, label: string): void {
  denied(t, r, label);
  t.is(r.body?.ok, false, `${label}: ok`);
  t.is(typeof r.body?.request_id, 'string', `${label}: request_id`);
  t.true(r.body?.error?.source === 'svc' || r.body?.error?.source === 'api', `${label}: source`);
}

/** Valid args for `spec` naming the victim's real objects, so the credential is the only thing wrong. */
function victimArgs(t: ExecutionContext, spec: CommandSpec, v: Victim): Record<string, unknown> {
  const pool: Record<string, unknown> = {
    machine_id: VICTIM, invoice_id: v.invoiceId, receipt_id: v.receiptId, units: 1, network: 'TRON', asset: 'USDT',
    quote_id: spec.execution ? v.accepted.get(spec.name) : v.issuedQuote,
    // execution inputs: the bytes each quote bound (the credential is refused before they are used)
    plain_hex: HEX, packet_hex: HEX,
  };
  const required = (spec.args.required ?? []) as string[];
  const args: Record<string, unknown> = {};
  for (const f of required) {
    if (pool[f] === undefined) t.fail(`${spec.name}: no valid value for ${f}: extend this test`);
    args[f] = pool[f];
  }
  return args;
}

async function setUpVictim(s: Svcd, c: SvcClient): Promise<Victim> {
  const token = await fundMachine(s, VICTIM, 5);
  const auth = { token };
  const inv = await c.request('FUND_ACCOUNT', { machine_id: VICTIM, units: 2, network: 'Base', asset: 'USDC' }, auth);
  const quoteBodies: Record<string, unknown>[] = [];
  const quote = async (service: string, extra: Record<string, unknown>) => {
    const body = { service, machine_id: VICTIM, bits: 64, idempotency_key: `authz-${quoteBodies.length}`, ...extra };
    quoteBodies.push(body);
    return (await c.request('QUOTE', body)).quote_id as string;
  };
  const forReceipt = await quote('get-pulse', {});
  await c.request('ACCEPT_QUOTE', { quote_id: forReceipt, machine_id: VICTIM }, auth);
  const done = await c.request('GET_PULSE', { quote_id: forReceipt, machine_id: VICTIM }, auth);
  const issuedQuote = await quote('get-pulse', {});
  const accepted = new Map<string, string>();
  for (const spec of AUTHED.filter((x) => x.execution)) {
    const svc = serviceOf(spec.name)!;
    // the input the service binds, else a size its quote accepts (none for GET_PULSE, 32 for a digest)
    const size = svc.bytes && Math.min(svc.bytes.max, Math.max(svc.bytes.min, HEX.length / 2));
    const input = svc.quoteInput ? { [svc.quoteInput]: HEX } : size === null ? {} : { bytes: size };
    const q = await quote(svc.service, input);
    await c.request('ACCEPT_QUOTE', { quote_id: q, machine_id: VICTIM }, auth);
    accepted.set(spec.name, q);
  }
  return {
    token, invoiceId: inv.invoice_id as string, receiptId: done.receipt_id as string, issuedQuote, accepted,
    quoteBodies,
  };
}

/** What an attack could have changed, read with the victim's own token. */
async function snapshot(c: SvcClient, v: Victim): Promise<Record<string, unknown>> {
  const auth = { token: v.token };
  const bal = await c.request('BALANCE', { machine_id: VICTIM }, auth);
  const inv = await c.request('INVOICE_STATUS', { invoice_id: v.invoiceId, machine_id: VICTIM }, auth);
  const quotes = [];
  for (const body of v.quoteBodies) {
    const r = await c.request('QUOTE', body);
    quotes.push([r.quote_id, r.state, r.idempotent_replayed]);
  }
  const receipt = await c.request('VERIFY_RECEIPT', { receipt_id: v.receiptId, machine_id: VICTIM });
  return {
    available: bal.available_units, reserved: bal.reserved_units, invoice: [inv.state, inv.units], quotes,
    receipt: [receipt.valid, (receipt.receipt as { quote_id: string }).quote_id],
  };
}

test('authenticated commands refuse no, wrong and borrowed tokens on both surfaces; victim untouched', async (t) => {
  const s = await startSvcd(t);
  const base = s.ready.http!;
  t.true(AUTHED.length > 0 && AUTHED.some((c) => !c.http), 'authenticated commands, some without a route');

  const c = await s.edge();
  const victim = await setUpVictim(s, c);
  const attackerToken = await fundMachine(s, ATTACKER, 1);
  const before = await snapshot(c, victim);
  t.true((before.quotes as unknown[][]).every((q) => q[2] === true), 'the quote snapshots are replays, not new quotes');

  const atk = await SvcClient.connect({
    kind: 'tls', host: '127.0.0.1', port: s.edgePort, pin: s.ready.edge_cert_sha256, localAddress: ATTACKER_ADDR,
  });
  const httpCreds: Record<string, Record<string, string>> = {
    'no token': {},
    'a wrong token': { authorization: `Bearer ${WRONG}` },
    'another machine\'s token': { authorization: `Bearer ${attackerToken}` },
  };
  const edgeCreds: Record<string, { machine_id?: string; token?: string } | undefined> = {
    'no auth': undefined,
    'a wrong token': { token: WRONG },
    'another machine\'s token': { token: attackerToken },
    'another machine\'s token and id': { machine_id: ATTACKER, token: attackerToken },
    'another machine\'s token, naming the victim': { machine_id: VICTIM, token: attackerToken },
  };
  let tried = 0;
  for (const spec of AUTHED) {
    const args = victimArgs(t, spec, victim);
    if (spec.http) {
      for (const [what, headers] of Object.entries(httpCreds)) {
        deniedHttp(t, await viaHttp(base, ATTACKER_ADDR, spec.name, args, headers), `HTTP ${spec.name} with ${what}`);
        tried++;
      }
    }
    for (const [what, auth] of Object.entries(edgeCreds)) {
      denied(t, await viaEdge(atk, spec.name, args, auth), `svc/1 ${spec.name} with ${what}`);
      tried++;
    }
  }
  t.true(tried >= AUTHED.length * 5, `${tried} attempts`);

  // the attacker's own valid credentials on the victim's quotes, invoices and receipts: not found / not yours
  for (const spec of AUTHED) {
    const args = { ...victimArgs(t, spec, victim), machine_id: ATTACKER };
    if (!['quote_id', 'invoice_id', 'receipt_id'].some((k) => k in args)) continue;
    const outcomes: [string, Outcome][] = [['svc/1', await viaEdge(atk, spec.name, args, { token: attackerToken })]];
    if (spec.http) {
      const h = { authorization: `Bearer ${attackerToken}` };
      outcomes.push(['HTTP', await viaHttp(base, ATTACKER_ADDR, spec.name, args, h)]);
    }
    for (const [surface, r] of outcomes) {
      const what = `${surface} ${spec.name} on the victim's object: ${r.status} ${r.code}`;
      t.true(r.status === 404 || r.status === 409, what);
    }
  }
  atk.close();

  t.deepEqual(await snapshot(c, victim), before, 'balance, invoice, quotes and receipt are as before');
  // the objects the attacks named still work for their owner
  const auth = { token: victim.token };
  const acc = await c.request('ACCEPT_QUOTE', { quote_id: victim.issuedQuote, machine_id: VICTIM }, auth);
  t.is(acc.state, 'accepted');
  const plain = AUTHED.find((x) => x.execution && serviceOf(x.name)?.execInput === null)!;
  const quoteId = victim.accepted.get(plain.name)!;
  const ran = await c.request(plain.name, { quote_id: quoteId, machine_id: VICTIM }, auth);
  t.regex(ran.receipt_id as string, /^rcpt_/);
  c.close();

  await stopCheckingLedger(s);
});
