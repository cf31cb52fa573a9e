// Opening a node's parts from its data dir: the dir itself (private), node keys, edge TLS material,
// kernels (self-checked), the store (refused when the ledger invariant is broken), the kernel pool,
// the pulse chain and the transparency logs. What it returns is the context every handler gets.
import { chmodSync, mkdirSync, statSync } from 'node:fs';
import { Kernels, KernelPool } from '../kernels/index.ts';
import { selfCheck } from '../kernels/self-check.ts';
import { openStore, type Store } from '../store/store.ts';
import type { Config } from './config.ts';
import type { CoreContext } from './context.ts';
import { indexPendingExpiry, indexSettlementReferences } from './invoices.ts';
import { holderId } from './leases.ts';
import { Ledger } from './ledger.ts';
import { verifyAtStart } from './ledger-checkpoint.ts';
import { NodeIdentity } from './node-identity.ts';
import { PulseChain } from './pulse-chain.ts';
import { publishNodeKeys } from './receipts.ts';
import { clearOwnStaleHolds } from './sweeps.ts';
import { loadTlsMaterial, type TlsMaterial } from './tls-material.ts';
import { TransparencyLog } from './tlog.ts';
import { indexRecordedTransfers } from './transfers.ts';

/**
 * The data dir holds the ledger, the node keys and the admin socket: only the service's user may
 * enter it. A pre-existing dir with group/other access is tightened to 0700 when it is ours; one
 * that is not ours (or a shared sticky dir such as /tmp) is refused rather than changed.
 */
function secureDataDir(dir: string): void {
  const st = statSync(dir);
  if ((st.mode & 0o7077) === 0) return;
  const uid = process.getuid?.();
  if ((st.mode & 0o1000) !== 0 || (uid !== undefined && st.uid !== uid)) {
    const mode = (st.mode & 0o7777).toString(8);
    throw new Error(`data dir ${dir} (mode ${mode}) is shared or not owned by this user; use a private dir (0700)`);
  }
  chmodSync(dir, 0o700);
}

/** The store, refused (closed, and an error thrown) when another process runs this node or the ledger is broken. */
async function openLedger(config: Config, identity: NodeIdentity): Promise<{ store: Store; ledger: Ledger }> {
  const store = await openStore(config.dataDir, config.store);
  // shared store: one process per node id (its pulse chain and logs have one writer); a second process
  // with this node key stops here, before it writes anything, instead of at its first pulse
  if (!(await store.lockSession(`node:${identity.nodeId}`))) {
    await store.close();
    throw new Error(`another svcd process runs node ${identity.nodeId} on this database: each node needs a node `
      + 'key of its own (copy only quote-key.bin, result-key.bin and bct-key.bin between nodes, docs/scale-out.md)');
  }
  await clearOwnStaleHolds(store, identity.nodeId, holderId(identity.nodeId));
  const ledger = new Ledger(store);
  // from the signed checkpoint of the last start (what was written since), or the whole journal without one
  const check = await verifyAtStart(store, ledger, identity, new Date());
  if (!check.ok) {
    await store.close();
    throw new Error(`ledger invariant broken, refusing to serve:\n  ${check.problems.join('\n  ')}`);
  }
  // one payment reference credits one invoice: transfers recorded and references settled before their
  // indexes existed join them
  await indexRecordedTransfers(store);
  await indexSettlementReferences(store);
  // pending invoices from before the expiry index join it, so the sweep expires them too
  await indexPendingExpiry(store);
  return { store, ledger };
}

/**
 * Opens everything; throws (and svcd refuses to start) when the ledger invariant is broken. `now`
 * is the clock of every expiry, window and pulse time the core decides.
 */
export async function openNode(config: Config, now: () => Date): Promise<{ ctx: CoreContext; tls: TlsMaterial }> {
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  secureDataDir(config.dataDir);
  const identity = NodeIdentity.loadOrCreate(config.dataDir);
  const tls = await loadTlsMaterial({
    dataDir: config.dataDir, certFile: config.tlsCert, keyFile: config.tlsKey, hosts: [config.edgeHost],
  });
  const kernels = Kernels.create();
  const failed = selfCheck(kernels).filter((r) => !r.ok);
  if (failed.length) throw new Error(`kernel self-check failed: ${failed.map((f) => f.name).join(', ')}`);
  const { store, ledger } = await openLedger(config, identity);
  const pool = new KernelPool({ threads: config.kernelThreads });
  const chain = new PulseChain(store, identity, config.pulsePeriodMs, now);
  const logs = {
    timestamps: new TransparencyLog(store, kernels, identity, 'timestamps', `svc/${identity.nodeId}/timestamps`),
    events: new TransparencyLog(store, kernels, identity, 'machine-events', `svc/${identity.nodeId}/machine-events`),
  };
  const ctx: CoreContext = {
    store, ledger, identity, kernels, pool, chain, logs, config, edgeFingerprint: tls.fingerprint256, now,
  };
  await chain.start();
  // the other nodes of a shared store verify this node's receipts with the keys it publishes
  await publishNodeKeys(store, identity, now());
  return { ctx, tls };
}
