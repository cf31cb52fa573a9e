// A rolling upgrade (docs/scale-out.md "Rolling upgrade"): two nodes and two gateways of the previous
// version (a git worktree of PREVIOUS) on one PostgreSQL database, Debian's HAProxy in front of the
// gateways checking /readyz, careful clients running paid flows through it throughout. Each part in turn
// is stopped (SIGTERM: it drains) and started again from this tree — node 1, node 2, gateway 1, gateway
// 2 — so old and new versions serve side by side during the window. No flow fails, the only answers
// other than 200 are the contract's, and the audit is clean.
import test from 'ava';
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../docs/blocks.ts';
import { auditCluster, freePort, SHARED_KEYS, untilNodes } from '../support/cluster.ts';
import { carefulClient, runLanes } from '../support/flows.ts';
import { HAPROXY, haproxyConfig, listening } from '../support/host-cluster.ts';
import { allOf, testNeeding } from '../support/needs.ts';
import { POSTGRES, postgresForFile } from '../support/postgres.ts';
import { BIN, fundMachine, Svcd } from '../support/svcd.ts';

/** The version upgraded from: the last one before mutual TLS, probes and affinity (a commit of this repository). */
const PREVIOUS = 'cc4bdc4';
const postgres = postgresForFile(test);

testNeeding(test, `rolling upgrade from ${PREVIOUS}: nodes then gateways one at a time behind HAProxy, paid flows `
  + 'throughout: none fails, audit clean', allOf(POSTGRES, HAPROXY), async (t) => {
  t.timeout(480_000);
  const tree = mkdtempSync(join(tmpdir(), 'svc-previous-'));
  rmSync(tree, { recursive: true });
  execFileSync('git', ['worktree', 'add', '--detach', tree, PREVIOUS], { cwd: ROOT, stdio: 'ignore' });
  t.teardown(() => execFileSync('git', ['worktree', 'remove', '--force', tree], { cwd: ROOT, stdio: 'ignore' }));
  symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'));
  const old = join(tree, 'src/bin/svcd.mjs');

  const url = await (await postgres()).freshDatabase();
  const backends = await Promise.all([freePort(), freePort()]);
  const nodes = backends.map((p) => new Svcd({ SVC_STORE: url, SVC_BACKEND_PORT: String(p) }));
  for (const n of nodes) n.bin = old;
  await nodes[0]!.start(['core']);
  for (const f of SHARED_KEYS) copyFileSync(join(nodes[0]!.dataDir, f), join(nodes[1]!.dataDir, f));
  await nodes[1]!.start(['core']);
  const list = backends.map((p) => `127.0.0.1:${p}`).join(',');
  const ports = await Promise.all([freePort(), freePort()]);
  const gateways = ports.map((p) => new Svcd({
    SVC_CORE_NODES: list, SVC_HTTP_PORT: String(p), SVC_TRUST_PROXY: '1', SVC_TRUSTED_PROXIES: '127.0.0.1',
    SVC_HTTP_MAX_CONNECTIONS_PER_ADDRESS: '0',
  }));
  for (const g of gateways) g.bin = old;
  await Promise.all(gateways.map((g) => g.start(['gateway'])));
  const parts = [...nodes, ...gateways];
  t.teardown(async () => {
    for (const p of [...gateways, ...nodes]) { await p.stop(); p.cleanup(); }
  });

  const lbPort = await freePort();
  const config = join(nodes[0]!.dataDir, 'haproxy.cfg');
  writeFileSync(config, haproxyConfig(`127.0.0.1:${lbPort}`,
    ports.map((p, i) => ({ name: `gw-${i + 1}`, address: `127.0.0.1:${p}` }))));
  const haproxy = spawn('haproxy', ['-db', '-f', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => { haproxy.kill('SIGKILL'); });
  await listening('127.0.0.1', lbPort, haproxy);
  const lb = `http://127.0.0.1:${lbPort}`;

  const M = 'rolling';
  const client = carefulClient(M, await fundMachine(nodes[0]!, M, 1));
  const lanes = runLanes(t, client, lb, 4);
  const { seen, progress } = lanes;
  const names = ['node 1', 'node 2', 'gateway 1', 'gateway 2'];
  for (const [i, part] of parts.entries()) {
    await progress(`flows before upgrading ${names[i]}`);
    await part.stop();
    part.bin = BIN.svcd;
    await part.start();
    await progress(`flows after upgrading ${names[i]}`);
  }
  await untilNodes(lb, 2, 'both nodes serve behind HAProxy', 8);
  await lanes.stop();
  t.log(`${seen.length} flows; ${[...client.outcomes].map(([o, k]) => `${o}: ${k}`).join(', ')}; answers other `
    + `than 200: ${[...client.refusals].map(([o, k]) => `${o}: ${k}`).join(', ') || 'none'}`);
  t.deepEqual(client.unexpected(), [], 'every flow executed, or its unknown accept had not landed');
  const contract = ['502 edge_unavailable', '502 busy', '409 idempotency_in_progress', '409 quote_not_accepted'];
  t.deepEqual([...client.refusals.keys()].filter((r) => !contract.includes(r)), [], 'only the contract\'s errors');
  for (const n of nodes) {
    const admin = await n.admin();
    t.like(await admin.request('HEALTH', {}), { store: { status: 'ok' } }, 'each node runs this version now');
    admin.close();
  }

  for (const g of gateways) await g.stop();
  for (const n of nodes) await n.stop();
  const { report } = await auditCluster(url);
  t.true(report.clean, report.discrepancies.join('\n'));
  t.true(report.ledger.ok, report.ledger.problems.join('; '));
});
