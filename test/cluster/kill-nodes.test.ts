// Kill -9 of a core node, ten times, during mixed paid flows over two gateways in
// front of two real svcd nodes on one PostgreSQL database (the node killed alternates; each is started
// again before the next kill). The surviving node keeps serving: flows complete while the other is down.
// The clients behave as the contract tells them: a 502 edge_unavailable (the node was lost after the call
// was sent: outcome unknown) on an ACCEPT without an idempotency key is followed by the execution, which
// answers whether the accept landed; a keyed ACCEPT still marked running by the killed node (409
// idempotency_in_progress) is sent again a little later; an execution is sent again with its quote_id
// until it answers (a replay returns the same receipt). Afterwards: every receipt a client saw is in the
// database and every receipt in the database was seen by a client, no unit lost or doubled (the audit
// and the ledger invariant: credited = available + spent, nothing left held), and each node's pulse
// chain is unforked.
import test from 'ava';
import { PgStore } from '../../src/store/pg-store.ts';
import { auditCluster, Cluster, LOADED_GATEWAY_ENV } from '../support/cluster.ts';
import { carefulClient } from '../support/flows.ts';
import { testNeeding } from '../support/needs.ts';
import { POSTGRES, postgresForFile } from '../support/postgres.ts';
import { fundMachine } from '../support/svcd.ts';
import { until } from '../support/until.ts';

const postgres = postgresForFile(test);
const KILLS = 10;

testNeeding(test, 'kill -9 of a core node ten times during paid flows: the other serves, no receipt or unit '
  + 'lost or doubled, pulse chains unforked', POSTGRES, async (t) => {
  t.timeout(600_000);
  const url = await (await postgres()).freshDatabase();
  const cluster = await Cluster.start(url, {
    nodeEnv: { SVC_PULSE_PERIOD_MS: '1000' },
    gatewayEnv: LOADED_GATEWAY_ENV,
  });
  t.teardown(() => cluster.stop());
  const M = 'cluster-kill';
  const token = await fundMachine(cluster.nodes[0]!, M, 1);

  const seen: string[] = [];
  const { flow, outcomes, unexpected } = carefulClient(M, token);
  let stop = false;
  /** while a node restarts the lanes wait (a start on a loaded 2-core box is slow enough without them) */
  let paused: Promise<void> | null = null;
  const lane = async (base: string) => {
    while (!stop) {
      if (paused) await paused;
      const r = await flow(base);
      if (r) seen.push(r);
    }
  };
  const lanes = Promise.all(cluster.urls.flatMap((u) => [lane(u), lane(u)]));
  t.teardown(() => { stop = true; });

  const restarts: number[] = [];
  const progress = (from: number, what: string) => until(what, () => seen.length >= from + 3, { ms: 120_000 });
  for (let k = 0; k < KILLS; k++) {
    await progress(seen.length, `flows complete before kill ${k + 1}`);
    const victim = cluster.nodes[k % 2]!;
    await victim.kill9();
    await progress(seen.length, `flows complete on the survivor after kill ${k + 1}`);
    let resume!: () => void;
    paused = new Promise((r) => { resume = r; });
    const t0 = Date.now();
    await victim.start();
    restarts.push(Date.now() - t0);
    paused = null;
    resume();
  }
  await progress(seen.length, 'flows complete with both nodes back');
  stop = true;
  await lanes;
  t.log(`restarts took ${restarts.join(', ')} ms`);
  t.log(`${seen.length} flows seen to succeed; ${[...outcomes].map(([o, c]) => `${o}: ${c}`).join(', ')}`);
  t.is(new Set(seen).size, seen.length, 'no receipt seen twice for two flows');
  t.deepEqual(unexpected(), [], 'every flow executed, or its unknown accept had not landed');

  for (const g of cluster.gateways) {
    t.regex(g.stdout, /"msg":"core node down"/, 'the gateway logged a node going down');
  }

  await cluster.stop();
  const { report, chains, forks } = await auditCluster(url);
  t.true(report.clean, report.discrepancies.join('\n'));
  t.true(report.ledger.ok, report.ledger.problems.join('; '));
  const m = report.machines.find((x) => x.machine_id === M)!;
  t.is(m.reserved_units, '0', 'nothing left held');
  t.is(BigInt(m.available_units) + BigInt(m.spent_units), BigInt(m.credited_units), 'credited = available + spent');
  t.deepEqual(forks, []);
  t.is(chains.size, 2, 'one chain per node');
  for (const [node, length] of chains) t.true(length > KILLS / 2, `${node}: ${length} pulses, one at least per start`);

  const db = await PgStore.open(url, { poolSize: 1 });
  try {
    const stored: string[] = [];
    for await (const k of db.keys('receipts')) stored.push(k);
    t.deepEqual(stored.sort(), [...seen].sort(), 'the receipts stored are exactly those the clients saw');
  } finally {
    await db.close();
  }
});
