// Two real svcd core nodes and two real `svcd gateway` processes on one PostgreSQL
// database, every gateway spreading its calls over both nodes (SVC_CORE_NODES). One machine funded for
// exactly 50 paid flows meets 200 concurrent quote → accept → execute flows over both gateways: exactly
// 50 execute, each with its receipt, the balance ends at 0 and the journal recomputes to it. And 50
// concurrent ACCEPTs of one quote over both gateways (so both nodes): exactly one succeeds.
import test from 'ava';
import { api, auditCluster, Cluster, describe, LOADED_GATEWAY_ENV, nodeIds } from '../support/cluster.ts';
import { bitsCosting, exactFlow as flow, retryBusy } from '../support/flows.ts';
import { testNeeding } from '../support/needs.ts';
import { POSTGRES, postgresForFile } from '../support/postgres.ts';
import { fundMachine } from '../support/svcd.ts';

const postgres = postgresForFile(test);
const BYTES = 16;

testNeeding(test, 'two nodes, two gateways, one database: 200 flows for a balance of 50 execute 50; one quote '
  + 'accepted once', POSTGRES, async (t) => {
  t.timeout(300_000);
  const url = await (await postgres()).freshDatabase();
  const cluster = await Cluster.start(url, { gatewayEnv: LOADED_GATEWAY_ENV });
  t.teardown(() => cluster.stop());
  const [g1, g2] = cluster.urls as [string, string];

  // each gateway spreads its calls: calls one after another alternate between the nodes
  const ids = cluster.nodes.map((n) => n.ready.data_dir);
  for (const g of [g1, g2]) {
    t.is((await nodeIds(g, 4)).length, 2, `${g} reached both nodes (${ids.length} started)`);
  }

  // one machine funded for exactly 50 flows: the invoice's credit (1 svcC and a random suffix) is spent
  // down to 50 × the flow's price by one paid flow priced at the rest
  const M = 'cluster-fifty';
  const token = await fundMachine(cluster.nodes[0]!, M, 1);
  const balance = async (base: string) => {
    const b = await api(base, '/api/v1/balance', { machine_id: M }, token);
    t.is(b.status, 200, describe(b));
    return [BigInt(b.body.available_units), BigInt(b.body.reserved_units)];
  };
  const [credit] = await balance(g1);
  const each = Math.floor((Number(credit) - 200_000) / 50);
  const rest = Number(credit) - 50 * each;
  t.regex(await flow(g2, M, token, bitsCosting(rest)), /^executed rcpt_/);
  t.deepEqual(await balance(g1), [BigInt(50 * each), 0n], 'funded for exactly 50 flows');

  const bits = bitsCosting(each);
  const outcomes = await Promise.all(Array.from({ length: 200 }, (_, i) => flow(i % 2 ? g2 : g1, M, token, bits)));
  const executed = outcomes.filter((o) => o.startsWith('executed '));
  const refused = outcomes.filter((o) => o === 'accept: 409 insufficient_balance');
  t.is(executed.length, 50, [...new Set(outcomes.map((o) => o.replace(/rcpt_\S+/, 'rcpt')))].join(', '));
  t.is(refused.length, 150);
  t.is(new Set(executed).size, 50, 'fifty receipts, all different');
  t.deepEqual(await balance(g2), [0n, 0n], 'balance 0, nothing held');

  // 50 concurrent ACCEPTs of one quote, over both gateways
  const M2 = 'cluster-one-quote';
  const token2 = await fundMachine(cluster.nodes[1]!, M2, 1);
  const q = await api(g1, '/api/v1/quotes/attest-event', { machine_id: M2, bits: 64, bytes: BYTES });
  const accepts = await Promise.all(Array.from({ length: 50 }, (_, i) => retryBusy(() => api(i % 2 ? g2 : g1,
    `/api/v1/quotes/${q.body.quote_id}/accept`, { machine_id: M2 }, token2))));
  const codes = accepts.map(describe);
  t.is(codes.filter((c) => c === '200').length, 1, codes.join(' '));
  t.is(codes.filter((c) => c === '409 quote_not_issued').length, 49, codes.join(' '));

  await cluster.stop();
  const { report, forks } = await auditCluster(url);
  t.true(report.clean, report.discrepancies.join('\n'));
  t.true(report.ledger.ok, report.ledger.problems.join('; '));
  t.deepEqual(forks, []);
  const m = report.machines.find((x) => x.machine_id === M)!;
  t.deepEqual([m.available_units, m.reserved_units, m.spent_units], ['0', '0', credit!.toString()],
    'the journal sums to the balance: all credited, all spent');
  t.is(report.totals.receipts, 51, 'the 50 and the one that set the balance');
});
