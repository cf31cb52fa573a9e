// Paid flows over HTTP as the cluster tests' clients run them (test/cluster/): a flow at an exact price,
// a careful client that rides out a node lost under it as the contract tells it to, and lanes of its flows.
import { price } from '../../src/protocol/pricing.ts';
import type { ExecutionContext } from 'ava';
import { api as httpApi, describe, type Answer } from './cluster.ts';
import { until } from './until.ts';

const BYTES = 16;

/** The smallest attest-event `bits` whose quote costs exactly `units` (the bits term is contiguous there). */
export function bitsCosting(units: number): number {
  const cost = (b: number) => price('attest-event', b, BYTES, 'standard').quote_units;
  let lo = 1, hi = 0xffff_ffff;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (cost(mid) < units) lo = mid + 1; else hi = mid;
  }
  if (cost(lo) !== units) throw new Error(`no attest-event quote costs exactly ${units}`);
  return lo;
}

/** A step the core refused because the ledger moved under it (busy): sent again, as a client must. */
export async function retryBusy(step: () => Promise<Answer>): Promise<Answer> {
  for (let i = 0; ; i++) {
    const a = await step();
    if (a.body?.error?.code !== 'busy' || i === 20) return a;
  }
}

/** One paid attest-event flow at `bits`; 'executed <receipt id>', or the first refusal. */
export async function exactFlow(base: string, machine: string, token: string, bits: number): Promise<string> {
  const q = await httpApi(base, '/api/v1/quotes/attest-event', { machine_id: machine, bits, bytes: BYTES });
  if (q.status !== 200) return `quote: ${describe(q)}`;
  const id = q.body.quote_id as string;
  const a = await retryBusy(() => httpApi(base, `/api/v1/quotes/${id}/accept`, { machine_id: machine }, token));
  if (a.status !== 200) return `accept: ${describe(a)}`;
  const args = { quote_id: id, machine_id: machine, plain_hex: '00' };
  const e = await retryBusy(() => httpApi(base, '/api/v1/executions/attest-event', args, token));
  return e.status === 200 ? `executed ${e.body.receipt_id}` : `execute: ${describe(e)}`;
}

/** two services, so the flows mix kernels and result shapes */
const SERVICES = [
  { service: 'attest-event', quote: { bits: 64, bytes: 16 }, exec: { plain_hex: '00' } },
  { service: 'get-pulse', quote: { bits: 64 }, exec: {} },
] as const;

/** Whether a step should be sent again as it is: its outcome is unknown, or the ledger moved (busy). */
const again = (a: Answer) => unknown(a) || (a.status === 502 && a.body?.error?.code === 'busy');
/** The request may or may not have run: the node was lost under it, or the connection to the gateway was. */
const lost = (a: Answer) => (a.status === 502 && a.body?.error?.code === 'edge_unavailable') || a.status === 0;
/** ...or the node's database went away under it (a write that may have landed, as its message says) */
const unknown = (a: Answer) => lost(a) || (a.status === 502 && a.body?.error?.code === 'service_unavailable');

/**
 * Flows as a careful client runs them while nodes die under it: a 502 edge_unavailable (the node was lost
 * after the call was sent: outcome unknown) or service_unavailable (its database was, or could not be
 * reached) on an ACCEPT is followed by the execution, which answers whether the accept landed; a keyed
 * ACCEPT still marked running by a lost node (409 idempotency_in_progress) is sent again a little later;
 * an execution is sent again with its quote_id until it answers (a replay returns the same receipt). Every
 * other flow names an idempotency key. `note` counts each outcome; `flow` returns the receipt id, or null.
 */
export function carefulClient(machine: string, token: string) {
  const outcomes = new Map<string, number>();
  const note = (what: string) => outcomes.set(what, (outcomes.get(what) ?? 0) + 1);
  /** every answer other than 200 the client met, retried or not, by status and code */
  const refusals = new Map<string, number>();
  /** the first message of each kind of answer other than 200, with when it came: what a failure log shows */
  const messages = new Map<string, string>();
  const api = async (...args: Parameters<typeof httpApi>): Promise<Answer> => {
    // a connection the proxy or the gateway closed under the request: the outcome is unknown, as a 502
    // edge_unavailable says (a careful client treats both alike)
    const a = await httpApi(...args).catch((): Answer => ({ status: 0, body: { error: { code: 'connection_lost' } } }));
    if (a.status !== 200) refusals.set(describe(a), (refusals.get(describe(a)) ?? 0) + 1);
    if (a.status !== 200 && !messages.has(describe(a))) {
      messages.set(describe(a), `${new Date().toISOString()} ${args[1]}: ${a.body?.error?.message ?? ''}`);
    }
    return a;
  };
  let n = 0;
  /** quotes whose execution was sent to a node that was lost before it answered (outcome unknown) */
  const unknownExecutes = new Set<string>();
  const flow = async (base: string): Promise<string | null> => {
    const i = n++;
    const s = SERVICES[i % SERVICES.length]!;
    let q: Answer;
    let asked = 0;
    do q = await api(base, `/api/v1/quotes/${s.service}`, { machine_id: machine, ...s.quote });
    while (q.status === 0 && ++asked < 5); // a quote changes nothing: ask again
    if (q.status !== 200) { note(`quote ${describe(q)}`); return null; }
    const id = q.body.quote_id as string;
    const key = i % 4 < 2 ? { idempotency_key: `accept-${i}` } : {};
    let a: Answer;
    const deadline = Date.now() + 90_000;
    for (;;) {
      a = await api(base, `/api/v1/quotes/${id}/accept`, { machine_id: machine, ...key }, token);
      if (a.status === 502 && a.body?.error?.code === 'busy') continue;
      if (a.status === 0) a = { status: 502, body: { error: { code: 'edge_unavailable' } } }; // as unknown
      // the key is still marked running by the node that was lost mid-request: the contract says retry
      // later (the node clears its marks when it is back; another node's sweep after the mark's lease)
      if (a.status !== 409 || a.body?.error?.code !== 'idempotency_in_progress' || Date.now() > deadline) break;
      note('accept 409 idempotency_in_progress (keyed), retried');
      await new Promise((r) => setTimeout(r, 500));
    }
    if (a.status !== 200) {
      note(`accept ${describe(a)}${'idempotency_key' in key ? ' (keyed)' : ''}`);
      if (!unknown(a)) return null;
    }
    let e: Answer;
    let tries = 0;
    for (;;) {
      e = await api(base, `/api/v1/executions/${s.service}`, { quote_id: id, machine_id: machine, ...s.exec }, token);
      // sent to a node that was then lost (it may still run there when the node comes back), or whose
      // database went away under its write
      if (unknown(e)) unknownExecutes.add(id);
      if (!again(e) || ++tries >= 50) break;
      if (unknown(e)) await new Promise((r) => setTimeout(r, 100)); // what was lost needs a moment to come back
    }
    if (e.status !== 200) { note(`execute ${describe(e)}`); return null; }
    note(e.body.replayed === true ? 'executed (replayed)' : 'executed');
    return e.body.receipt_id as string;
  };
  /** Outcomes a careful client may meet: executed, or an unknown accept that had not landed. */
  const unexpected = () => [...outcomes.keys()]
    .filter((o) => !/^executed|^accept 502 (edge|service)_unavailable( \(keyed\))?$/.test(o)
    && o !== 'execute 409 quote_not_accepted' && !o.endsWith(', retried'));
  return { flow, outcomes, refusals, messages, unexpected, unknownExecutes };
}

export type CarefulClient = ReturnType<typeof carefulClient>;

/**
 * `count` lanes of `client`'s flows against `base`, each starting its next flow when one ends, until
 * stop(). `seen`: the receipts of the flows that executed; progress(what) waits for five more;
 * takeSlowest() is the longest flow since it was last called. A test that fails midway stops its lanes
 * (at teardown) before its parts: a flow cut by that is not a finding.
 */
export function runLanes(t: ExecutionContext, client: CarefulClient, base: string, count: number) {
  const seen: string[] = [];
  let running = true;
  let slowest = 0;
  const lane = async () => {
    while (running) {
      const t0 = Date.now();
      const r = await client.flow(base).catch((e: unknown) => { if (running) throw e; return null; });
      slowest = Math.max(slowest, Date.now() - t0);
      if (r) seen.push(r);
    }
  };
  t.teardown(() => { running = false; });
  const lanes = Promise.all(Array.from({ length: count }, lane));
  return {
    seen,
    progress(what: string) {
      const from = seen.length;
      return until(what, () => seen.length >= from + 5, { ms: 120_000 });
    },
    takeSlowest() {
      const s = slowest;
      slowest = 0;
      return s;
    },
    async stop() {
      running = false;
      await lanes;
    },
  };
}
