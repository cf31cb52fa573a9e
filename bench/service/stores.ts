// The servers of `bench:service --store pg` (docs/scale-out.md "Performance"): svcd on LevelDB, one svcd
// node on PostgreSQL (both `svcd start`: the gateway in the core's process), and two core nodes on one
// PostgreSQL database behind two `svcd gateway` processes spreading calls over both (the topology of
// docs/scale-out.md; each request crosses svc/1 to a node), beside the least a Koa + pg app does for the same
// flow (anchor.ts paid-pg). One PostgreSQL server (Debian's binaries in
// a temp dir, test/support/postgres.ts), a database per row. Knows how to start, fund and stop them.
import { Cluster } from '../../test/support/cluster.ts';
import { startPostgres } from '../../test/support/postgres.ts';
import type { Machine } from './load.ts';
import { BENCH_ENV, anchorMachines, fundMachines, startAnchor, startSvcd, type Server } from './servers.ts';

export interface Stores {
  /** LevelDB first, then 1 node and 2 nodes on PostgreSQL */
  servers: Server[];
  /** the minimal Koa + pg app doing the same flow on its own database: the PostgreSQL rows' anchor */
  anchor: Server;
  machines: Map<Server, Machine[]>;
  describe: Record<string, string>;
  stop(): Promise<void>;
}

export async function startStores(n: number): Promise<Stores> {
  const pg = await startPostgres();
  const up: Server[] = [];
  const stop = async () => {
    for (const s of up) await s.stop();
    await pg.stop();
  };
  try {
    const machines = new Map<Server, Machine[]>();
    const leveldb = await startSvcd('svcd LevelDB', 0);
    up.push(leveldb);
    machines.set(leveldb, await fundMachines(leveldb.core, n));
    const one = await startSvcd('svcd PostgreSQL 1 node', 0, { SVC_STORE: await pg.freshDatabase() });
    up.push(one);
    machines.set(one, await fundMachines(one.core, n));
    const anchor = await startAnchor('koa 3-route on PostgreSQL', 'paid-pg', await pg.freshDatabase());
    up.push(anchor);
    machines.set(anchor, anchorMachines(n));
    const cluster = await Cluster.start(await pg.freshDatabase(), {
      nodeEnv: BENCH_ENV, gatewayEnv: { ...BENCH_ENV, SVC_HTTP_MAX_CONNECTIONS_PER_ADDRESS: '0' },
    });
    const two: Server = {
      name: 'svcd PostgreSQL 2 nodes', urls: cluster.urls, pid: cluster.nodes[0]!.proc!.pid!,
      stop: () => cluster.stop(),
    };
    up.push(two);
    machines.set(two, await fundMachines(cluster.nodes[0]!, n));
    return {
      servers: up.filter((x) => x !== anchor), anchor, machines, stop,
      describe: {
        'koa 3-route on PostgreSQL': 'Koa + @koa/router + Ajv + pg: quote one INSERT, accept and execute a read and '
          + 'one guarded UPDATE each (bench/service/anchor.ts paid-pg)',
        'svcd LevelDB': '`svcd start`, the ledger in its data dir (gateway in process)',
        'svcd PostgreSQL 1 node': '`svcd start` with SVC_STORE (gateway in process)',
        'svcd PostgreSQL 2 nodes': 'two `svcd core` on one database, two `svcd gateway` over both (SVC_CORE_NODES); '
          + 'connections alternate gateways',
      },
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
