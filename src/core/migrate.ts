// `svcd migrate --to postgres://…`: a single node's LevelDB ledger copied into an empty PostgreSQL database,
// so the node (the same data dir: its keys, its certificate) can serve from there and others join it
// (docs/scale-out.md "Moving up"). svcd must be stopped: LevelDB's lock file refuses a second opener.
// Every record is copied from one LevelDB snapshot, in batches; the records a node keeps as its own on a
// shared store (its pulse chain and seeds, its transparency logs) move under its node id, as the pulse
// chain and the logs name them there; leases and marks of running keys, which only a running process
// holds, are left behind. The audit runs on both sides (every receipt's signature checked by the node's
// keys) and must come out equal, or the migration says what differs and the node is not to be switched.
import { Ledger } from './ledger.ts';
import { audit, type AuditReport } from './audit.ts';
import type { NodeIdentity } from './node-identity.ts';
import { put, SUBLEVELS, type Op, type Store, type SublevelName } from '../store/contract.ts';

/** Records per write into the database: bounded memory, and batches PostgreSQL takes in one statement. */
const CHUNK = 500;

/** Sublevels a running process alone holds (leases, marks of keys being run): not carried over. */
const TRANSIENT: ReadonlySet<SublevelName> = new Set(['leases', 'idempotency_running']);

/**
 * The key a record written on a store of its own has on a shared one, for the node `nodeId`: the pulse
 * chain's (src/core/pulse-chain.ts: `pulse_chain!<node id>`, pulses and seeds under `<node id>!`) and the
 * transparency logs' (src/core/tlog.ts: a log named `<node id>:<name>`); every other key is the same.
 */
export function sharedKey(sub: SublevelName, key: string, nodeId: string): string {
  if (sub === 'pulses' || sub === 'seeds') return `${nodeId}!${key}`;
  if (sub === 'tlog_nodes' || sub === 'tlog_entries') return `${nodeId}:${key}`;
  if (sub === 'meta' && key === 'pulse_chain') return `pulse_chain!${nodeId}`;
  if (sub === 'meta' && key.startsWith('tlog_size!')) return `tlog_size!${nodeId}:${key.slice('tlog_size!'.length)}`;
  return key;
}

export interface Migration {
  /** records copied, by sublevel */
  copied: Partial<Record<SublevelName, number>>;
  before: AuditReport;
  after: AuditReport;
  /** what differs between the two audits (empty: equal) */
  differences: string[];
}

/** Refuses a target that holds any record: a migration fills an empty ledger, never merges two. */
async function assertEmpty(target: Store): Promise<void> {
  for (const sub of SUBLEVELS) {
    for await (const k of target.keys(sub, { limit: 1 })) {
      throw new Error(`the database already holds a ledger (${sub}/${k}): migrate into an empty database`);
    }
  }
}

/** The audit's findings without the time it ran: what two audits of one ledger must agree on. */
function findings(r: AuditReport): Record<string, unknown> {
  const { generated_at: _at, ...rest } = r;
  return rest;
}

/** Copies `source` (LevelDB, one node's) into `target` (empty, shared) and audits both; see the header. */
export async function migrate(source: Store, target: Store, identity: NodeIdentity): Promise<Migration> {
  const check = await new Ledger(source).verify();
  if (!check.ok) throw new Error(`the LevelDB ledger fails its invariant: ${check.problems.join('; ')}`);
  await assertEmpty(target);
  const before = await audit(source, identity);
  const copied: Migration['copied'] = {};
  const snapshot = await source.snapshot();
  try {
    for (const sub of SUBLEVELS.filter((s) => !TRANSIENT.has(s))) {
      let ops: Op[] = [];
      let n = 0;
      for await (const [k, v] of source.entries(sub, { snapshot })) {
        ops.push(put(sub, sharedKey(sub, k, identity.nodeId), v));
        if (ops.length === CHUNK) { await target.write(ops); n += ops.length; ops = []; }
      }
      if (ops.length) await target.write(ops);
      n += ops.length;
      if (n) copied[sub] = n;
    }
  } finally {
    await snapshot.close();
  }
  const after = await audit(target, identity);
  const a = findings(before), b = findings(after);
  const differences = Object.keys(a).filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
  return { copied, before, after, differences };
}
