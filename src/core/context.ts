// What every core handler needs, passed explicitly (no globals): the store, the ledger, the node
// identity, the kernels (inline and pool), the pulse chain, the transparency logs, configuration
// and the clock.
import type { Kernels, KernelPool } from '../kernels/index.ts';
import type { Store } from '../store/store.ts';
import type { Config } from './config.ts';
import type { Ledger } from './ledger.ts';
import type { NodeIdentity } from './node-identity.ts';
import type { PulseChain } from './pulse-chain.ts';
import type { TransparencyLog } from './tlog.ts';

export interface CoreContext {
  store: Store;
  ledger: Ledger;
  identity: NodeIdentity;
  kernels: Kernels;
  pool: KernelPool;
  chain: PulseChain;
  /** the Merkle logs behind TIMESTAMP_PROOF and MACHINE_EVENT_LOG */
  logs: { timestamps: TransparencyLog; events: TransparencyLog };
  config: Config;
  edgeFingerprint: string;
  now(): Date;
}
