// `bench:service --x402` (docs/x402.md): what paying per request with x402 costs beside paying from a funded
// balance, on one svcd with x402 on against a local anvil chain (automine) holding the USDC port
// (test/x402/fixtures). Both flows are driven by the same client (node:http with keep-alive: fetch costs
// the client about twice as much per request) so the ratio compares the flows, not two load generators:
// prepaid is quote → accept → execute with the machine's token; x402 is quote → execute without a token
// (402) → execute with a PAYMENT-SIGNATURE signed with viem's EIP-712, a fresh nonce each flow.
// Knows how to start, load, stop and check the money; service.ts measures the rows.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toHex, type Address, type Hex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { Anvil } from '../../test/support/anvil.ts';
import type { Amount, LoadResult, Machine } from './load.ts';
import { percentile } from './load.ts';
import { median } from './report.ts';
import { fundMachines, startSvcd, type Server, type SvcdServer } from './servers.ts';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '../../src/core/x402/chain.ts';

/** anvil's genesis accounts (`--accounts 10`, ether only): 0 holds the token's supply, 8 relays, 9 is paid. */
const RELAYER = 8;
const PAY_TO = 9;
/** Payers sit past the genesis accounts: they need tokens, not ether (the relayer pays the gas). */
const FIRST_PAYER = 10;
/** what each payer is given: 1,000 tokens of 6 decimals, thousands of times what a bench run pays */
const HELD = 1_000n * 10n ** 6n;
const BITS = 256;
/** how often svcd asks the chain about a settlement: SVC_X402_POLL_MS's floor, the least a flow waits for */
export const POLL_MS = 20;
const JSON_HEADERS = { 'content-type': 'application/json' };

/** The mean time of each step of a flow, in ms, over the flows that completed. */
export type Steps = Record<string, number>;

export interface FlowResult extends LoadResult {
  steps: Steps;
  /** the first few unexpected answers, for the report */
  problems: string[];
}

export interface X402Setup {
  svcd: SvcdServer;
  /** the two rows' servers: the same svcd under two names, so rows and ratios name the flow */
  prepaid: Server;
  x402: Server;
  anvil: Anvil;
  token: Address;
  payTo: Address;
  machines: Machine[];
  payers: PrivateKeyAccount[];
  /** token base units paid by every x402 flow answered 200 so far (warm-up included) */
  paid: { amount: bigint; count: number };
  stop(): Promise<void>;
}

/**
 * anvil with the USDC port, `payers` payers holding tokens, svcd with x402 on (relayer: a genesis account's
 * key in a 0600 file; SVC_X402_POLL_MS at its floor) and `machines` machines funded the ordinary way.
 */
export async function startX402(payers: number, machines: number): Promise<X402Setup> {
  const anvil = await Anvil.start();
  const keyDir = mkdtempSync(join(tmpdir(), 'svc-bench-x402-'));
  let svcd: SvcdServer | null = null;
  const stop = async () => {
    await svcd?.stop();
    anvil.stop();
    rmSync(keyDir, { recursive: true, force: true });
  };
  try {
    const token = await anvil.deployToken3009();
    const payTo = anvil.account(PAY_TO).address;
    // mnemonicToAccount derives through PBKDF2 each call: derive each key once, sign with a plain key account
    const keyOf = (i: number) => toHex(anvil.account(i).getHdKey().privateKey!);
    const accounts = Array.from({ length: payers }, (_, i) => privateKeyToAccount(keyOf(FIRST_PAYER + i)));
    for (const a of accounts) await anvil.transfer(0, a.address, HELD);
    const keyFile = join(keyDir, 'relayer.key');
    writeFileSync(keyFile, `${keyOf(RELAYER)}\n`, { mode: 0o600 });
    svcd = await startSvcd('svcd x402', 0, {
      SVC_X402: 'on', SVC_X402_RPC: anvil.url, SVC_X402_ASSET: token, SVC_X402_PAY_TO: payTo,
      SVC_X402_RELAYER_KEY_FILE: keyFile, SVC_X402_POLL_MS: String(POLL_MS),
    });
    const funded = await fundMachines(svcd.core, machines);
    const as = (name: string): Server => ({ ...svcd!, name });
    return {
      svcd, prepaid: as('prepaid (token)'), x402: as('x402 (PAYMENT-SIGNATURE)'), anvil, token, payTo,
      machines: funded, payers: accounts, paid: { amount: 0n, count: 0 }, stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** One flow's outcome: its wall time and steps, or what went wrong. */
type Flow = { ok: true; ms: number; steps: Steps; requests: number } | { ok: false; why: string; requests: number };

/** Runs `flow` on `c` workers until `a` is spent; every flow's answers were checked by `flow` itself. */
async function drive(c: number, a: Amount, flow: (worker: number, agent: Agent) => Promise<Flow>): Promise<FlowResult> {
  const lat: number[] = [];
  const sums: Steps = {};
  const problems: string[] = [];
  let errors = 0;
  let bad = 0;
  let requests = 0;
  let started = 0;
  // a connection per worker, kept for the whole load as autocannon keeps its connections
  const agent = new Agent({ keepAlive: true, maxSockets: c });
  const t0 = performance.now();
  const more = () => ('ms' in a ? performance.now() - t0 < a.ms : started < a.units);
  await Promise.all(Array.from({ length: c }, async (_, w) => {
    while (more()) {
      started++;
      let f: Flow;
      try {
        f = await flow(w, agent);
      } catch (e) {
        // a connection error: counted and reported, never dropped
        errors++;
        if (problems.length < 5) problems.push(`error: ${(e as Error).message}`);
        continue;
      }
      requests += f.requests;
      if (!f.ok) {
        bad++;
        if (problems.length < 5) problems.push(f.why);
        continue;
      }
      lat.push(f.ms);
      for (const [k, v] of Object.entries(f.steps)) sums[k] = (sums[k] ?? 0) + v;
    }
  }));
  const seconds = (performance.now() - t0) / 1000;
  agent.destroy();
  lat.sort((x, y) => x - y);
  const steps = Object.fromEntries(Object.entries(sums).map(([k, v]) => [k, v / Math.max(1, lat.length)]));
  return {
    rate: lat.length / seconds, reqPerSec: requests / seconds, p50: percentile(lat, 0.5), p99: percentile(lat, 0.99),
    errors, non2xx: bad, count: lat.length, seconds, steps, problems,
  };
}

interface Answer { status: number; headers: IncomingHttpHeaders; text: string }

/** One POST of JSON on `agent`'s kept connections, read whole. */
function post(agent: Agent, url: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const length = { 'content-length': String(Buffer.byteLength(data)) };
    const req = request(url, { agent, method: 'POST', headers: { ...JSON_HEADERS, ...length, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({
        status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'),
      }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(data);
  });
}

/** A flow step's answer checked for its status; its body parsed when it is JSON. */
function answer(r: Answer, want: number): { ok: boolean; body: Record<string, any>; why: string } {
  let body: Record<string, any> = {};
  try {
    body = JSON.parse(r.text) as Record<string, any>;
  } catch { /* the status decides; the text goes into the report */ }
  return { ok: r.status === want, body, why: `${r.status} where ${want} was expected: ${r.text.slice(0, 200)}` };
}

async function quote(agent: Agent, base: string, machineId: string): Promise<{ id: string } | { why: string }> {
  const q = answer(await post(agent, `${base}/api/v1/quotes/get-pulse`, { machine_id: machineId, bits: BITS }), 200);
  return q.ok && typeof q.body.quote_id === 'string' ? { id: q.body.quote_id } : { why: `quote: ${q.why}` };
}

/** Prepaid flows: each worker its own funded machine (svcd serialises a machine's money steps). */
export function loadPrepaid(s: X402Setup, c: number, a: Amount): Promise<FlowResult> {
  const base = s.svcd.urls[0]!;
  return drive(c, a, async (w, agent) => {
    const m = s.machines[w % s.machines.length]!;
    const auth = { authorization: `Bearer ${m.token}` };
    const t0 = performance.now();
    const q = await quote(agent, base, m.id);
    if ('why' in q) return { ok: false, why: q.why, requests: 1 };
    const t1 = performance.now();
    const acc = answer(await post(agent, `${base}/api/v1/quotes/${q.id}/accept`, { machine_id: m.id }, auth), 200);
    if (!acc.ok) return { ok: false, why: `accept: ${acc.why}`, requests: 2 };
    const t2 = performance.now();
    const ex = answer(await post(agent, `${base}/api/v1/executions/get-pulse`,
      { machine_id: m.id, quote_id: q.id }, auth), 200);
    if (!ex.ok || ex.body.ok !== true) return { ok: false, why: `execute: ${ex.why}`, requests: 3 };
    const t3 = performance.now();
    return { ok: true, ms: t3 - t0, steps: { quote: t1 - t0, accept: t2 - t1, execute: t3 - t2 }, requests: 3 };
  });
}

interface Requirements {
  scheme: string; network: string; asset: string; amount: string; payTo: string; maxTimeoutSeconds: number;
  extra: { name: string; version: string; quote_id?: string };
}


/**
 * The PAYMENT-SIGNATURE header an x402 client sends for `req` (as test/x402/harness.ts signPayment does):
 * an EIP-3009 authorization with a fresh nonce, signed with viem's EIP-712 over the domain the 402 names.
 */
async function paymentHeader(payer: PrivateKeyAccount, req: Requirements, token: Address): Promise<string> {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const authorization = {
    from: payer.address, to: req.payTo as Address, value: BigInt(req.amount), validAfter: 0n,
    validBefore: now + BigInt(req.maxTimeoutSeconds), nonce: toHex(randomBytes(32)) as Hex,
  };
  const signature = await payer.signTypedData({
    domain: { name: req.extra.name, version: req.extra.version, chainId: 8453, verifyingContract: token },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES, primaryType: 'TransferWithAuthorization', message: authorization,
  });
  const payload = {
    x402Version: 2, accepted: req,
    payload: {
      signature, authorization: Object.fromEntries(Object.entries(authorization).map(([k, v]) => [k, String(v)])),
    },
  };
  return Buffer.from(JSON.stringify(payload)).toString('base64');
}

/**
 * x402 flows: each worker its own unclaimed machine_id (anyone's to pay for), payers taken in turn across
 * all workers so no one payer's balance carries the run.
 */
export function loadX402(s: X402Setup, c: number, a: Amount): Promise<FlowResult> {
  const base = s.svcd.urls[0]!;
  const url = `${base}/api/v1/executions/get-pulse`;
  let turn = 0;
  return drive(c, a, async (w, agent) => {
    const machineId = `x402-bench-${w}`;
    const payer = s.payers[turn++ % s.payers.length]!;
    const t0 = performance.now();
    const q = await quote(agent, base, machineId);
    if ('why' in q) return { ok: false, why: q.why, requests: 1 };
    const t1 = performance.now();
    const body = { machine_id: machineId, quote_id: q.id };
    const unpaid = await post(agent, url, body);
    const header = unpaid.headers['payment-required'];
    const u = answer(unpaid, 402);
    if (!u.ok || typeof header !== 'string') return { ok: false, why: `unpaid execute: ${u.why}`, requests: 2 };
    const req = (JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as { accepts: Requirements[] }).accepts[0]!;
    const t2 = performance.now();
    const signature = await paymentHeader(payer, req, s.token);
    const t3 = performance.now();
    const paid = await post(agent, url, body, { 'payment-signature': signature });
    const settled = paid.headers['payment-response'];
    const p = answer(paid, 200);
    if (!p.ok || p.body.ok !== true) return { ok: false, why: `paid execute: ${p.why}`, requests: 3 };
    if (!settled || p.body.payment?.amount !== req.amount) {
      return { ok: false, why: `paid execute: 200 without PAYMENT-RESPONSE or for another amount`, requests: 3 };
    }
    const t4 = performance.now();
    s.paid.amount += BigInt(req.amount);
    s.paid.count++;
    return {
      ok: true, ms: t4 - t0, requests: 3,
      steps: { quote: t1 - t0, unpaid_402: t2 - t1, sign: t3 - t2, paid_execute: t4 - t3 },
    };
  });
}

/** The money after the run: what payTo gained against what the x402 flows paid, and the store's audit. */
export interface X402Check {
  pay_to_gain: string;
  x402_paid: string;
  x402_flows: number;
  money_ok: boolean;
  audit_clean: boolean;
  audit_discrepancies: string[];
  audit_x402: unknown;
}

export async function checkMoney(s: X402Setup, before: bigint): Promise<X402Check> {
  const gain = await s.anvil.balanceOf(s.payTo) - before;
  const r = await s.svcd.core.svcAdmin(['--json', 'audit']);
  let audit: { clean?: boolean; discrepancies?: string[]; x402?: unknown } = {};
  try {
    audit = JSON.parse(r.stdout) as typeof audit;
  } catch {
    audit = { clean: false, discrepancies: [`svc-admin audit exited ${r.code}: ${r.stderr.slice(0, 300)}`] };
  }
  return {
    pay_to_gain: gain.toString(), x402_paid: s.paid.amount.toString(), x402_flows: s.paid.count,
    money_ok: gain === s.paid.amount, audit_clean: audit.clean === true,
    audit_discrepancies: audit.discrepancies ?? [], audit_x402: audit.x402 ?? null,
  };
}

/** The two lines every x402 run ends with (docs/bench.md): the money, then the audit. */
export function checkLines(k: X402Check): string[] {
  const money = k.money_ok ? 'ok' : 'MISMATCH';
  const audit = k.audit_clean ? 'clean' : `NOT CLEAN: ${k.audit_discrepancies.join('; ')}`;
  return [
    `money: ${money}: payTo gained ${k.pay_to_gain} token base units; the ${k.x402_flows} x402 flows answered 200 `
      + `paid ${k.x402_paid}`,
    `audit: ${audit} (svc-admin --json audit); x402 payments: ${JSON.stringify(k.audit_x402)}`,
  ];
}

/**
 * Where an x402 flow's time goes at each c, from the medians over rounds of each step's mean: the paid
 * request does what accept and execute do in the prepaid flow, plus the settlement; what it takes beyond
 * those two is the settlement's share (an estimate: the two run under different load).
 */
export interface StepSplit {
  c: number;
  prepaid: Steps;
  x402: Steps;
  /** paid_execute − (accept + execute) of the prepaid flow, ms */
  settlement_ms: number;
  /** settlement_ms over the x402 flow's mean time */
  settlement_share: number;
}

export function splitSteps(c: number, prepaid: Steps[], x402: Steps[]): StepSplit {
  const med = (xs: Steps[]) => {
    const keys = Object.keys(xs[0] ?? {});
    return Object.fromEntries(keys.map((k) => [k, median(xs.map((x) => x[k] ?? 0))]));
  };
  const p = med(prepaid);
  const x = med(x402);
  const settlement = (x.paid_execute ?? 0) - (p.accept ?? 0) - (p.execute ?? 0);
  const total = Object.values(x).reduce((s, v) => s + v, 0);
  return { c, prepaid: p, x402: x, settlement_ms: settlement, settlement_share: total > 0 ? settlement / total : 0 };
}

export function splitLines(splits: StepSplit[]): string[] {
  const ms = (s: Steps) => Object.entries(s).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ');
  return splits.flatMap((s) => [
    `c=${s.c} prepaid flow, mean ms: ${ms(s.prepaid)}`,
    `c=${s.c} x402 flow, mean ms: ${ms(s.x402)}; settlement ≈ paid_execute − (accept + execute) = `
      + `${s.settlement_ms.toFixed(2)} ms, ${(s.settlement_share * 100).toFixed(0)}% of the flow`,
  ]);
}
