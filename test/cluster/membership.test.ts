// Nodes join and leave a running gateway (SVC_CORE_NODES_FILE, re-read on SIGHUP), and a node restarts:
// two real nodes on PostgreSQL, one `svcd gateway`, careful clients running paid flows throughout. The
// gateway starts with node 1 only; node 2 is added (SIGHUP), then node 1 removed (its calls in flight
// finish first) and stopped, restarted and added back. A file listing no node is refused on SIGHUP, the
// list before staying. No client meets an error a membership change caused; the audit is clean.
import test from 'ava';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, auditCluster, Cluster, LOADED_GATEWAY_ENV, nodeIds } from '../support/cluster.ts';
import { carefulClient, runLanes } from '../support/flows.ts';
import { testNeeding } from '../support/needs.ts';
import { POSTGRES, postgresForFile } from '../support/postgres.ts';
import { fundMachine, Svcd } from '../support/svcd.ts';
import { until } from '../support/until.ts';

const postgres = postgresForFile(test);

testNeeding(test, 'nodes added and removed on SIGHUP while paid flows run, a node restarted: no client error, '
  + 'audit clean', POSTGRES, async (t) => {
  t.timeout(300_000);
  const url = await (await postgres()).freshDatabase();
  const cluster = await Cluster.start(url, { gateways: 0 });
  t.teardown(() => cluster.stop());
  const [n1, n2] = cluster.nodes as [Svcd, Svcd];
  const at = (n: Svcd) => `127.0.0.1:${n.backendPort}`;
  const file = join(n1.dataDir, 'core-nodes');
  writeFileSync(file, `# the nodes this gateway calls\n${at(n1)}\n`);
  const gateway = new Svcd({ SVC_CORE_NODES_FILE: file, SVC_LOG_LEVEL: 'info', ...LOADED_GATEWAY_ENV });
  await gateway.start(['gateway']);
  t.teardown(async () => { await gateway.stop(); gateway.cleanup(); });
  const base = gateway.ready.http!;
  const ids = () => nodeIds(base);
  const id1 = (await api(base, '/api/v1/hello')).body.node_id as string;
  t.deepEqual(await ids(), [id1], 'node 1 only');

  const M = 'membership';
  const client = carefulClient(M, await fundMachine(n1, M, 1));
  const lanes = runLanes(t, client, base, 3);
  const { seen, progress } = lanes;
  const reload = async (nodes: Svcd[], what: string) => {
    const before = (gateway.stdout.match(/svcd reloaded/g) ?? []).length;
    writeFileSync(file, nodes.map(at).join('\n') + '\n');
    gateway.proc!.kill('SIGHUP');
    await until(`the gateway reloads: ${what}`, () => (gateway.stdout.match(/svcd reloaded/g) ?? []).length > before);
    await progress(`flows go on after: ${what}`);
  };

  await progress('flows on node 1');
  await reload([n1, n2], 'node 2 added');
  const id2 = await until('both nodes answer', async () => (await ids()).find((x) => x !== id1), { every: 200 });
  await reload([n2], 'node 1 removed');
  t.deepEqual(await ids(), [id2], 'node 2 only');
  await n1.stop(); // out of the list: stopping it touches no client
  await progress('flows while node 1 is stopped');
  await n1.start(['core']);
  await reload([n2, n1], 'node 1 back');
  await until('both nodes answer again', async () => (await ids()).length === 2, { every: 200 });

  // a file listing no node: refused, the list before stays
  writeFileSync(file, '# nothing\n');
  gateway.proc!.kill('SIGHUP');
  await until('the failed reload is logged', () => /svcd reload failed.*lists no node|lists no node.*svcd reload failed/
    .test(gateway.stdout));
  await until('the nodes loaded before still serve', async () => (await ids()).length === 2, { every: 200 });
  await progress('flows after the refused reload');

  await lanes.stop();
  t.log(`${seen.length} flows; ${[...client.outcomes].map(([o, k]) => `${o}: ${k}`).join(', ')}; `
    + `answers other than 200: ${[...client.refusals].map(([o, k]) => `${o}: ${k}`).join(', ') || 'none'}`);
  t.deepEqual([...client.outcomes.keys()].filter((o) => !o.startsWith('executed')), [], 'every flow executed');
  t.deepEqual([...client.refusals.keys()].filter((r) => r !== '502 busy'), [], 'no client met a lost node');
  t.regex(gateway.stdout, /"added":\["127\.0\.0\.1:\d+"\]/);

  await gateway.stop();
  await cluster.stop();
  const { report } = await auditCluster(url);
  t.true(report.clean, report.discrepancies.join('\n'));
  t.true(report.ledger.ok, report.ledger.problems.join('; '));
});
