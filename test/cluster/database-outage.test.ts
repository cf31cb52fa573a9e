// A node whose database goes away says so: HEALTH answers `unavailable` (why, on the admin socket only), a
// gateway's /readyz turns 503 (so a load balancer sends no traffic there) and its probe marks the node
// down naming why; when the database is back, all three are back without a restart. And the database
// stopped outright three times under paid flows and a fast pulse chain (commits whose answers die with the
// server): after each, flows and pulses go on without a restart, every answer is the contract's, money exact.
import test from 'ava';
import { api, auditCluster, describe } from '../support/cluster.ts';
import { PgStore } from '../../src/store/pg-store.ts';
import { carefulClient, runLanes } from '../support/flows.ts';
import { txRef } from '../support/references.ts';
import { testNeeding } from '../support/needs.ts';
import { POSTGRES, postgresForFile } from '../support/postgres.ts';
import { Svcd } from '../support/svcd.ts';
import { until } from '../support/until.ts';

const postgres = postgresForFile(test);

// serial: each test stops the file's one server
testNeeding(test.serial, 'the database down: HEALTH unavailable, /readyz 503, the node marked down; back: all serve',
  POSTGRES, async (t) => {
    t.timeout(240_000);
    const pg = await postgres();
    const url = await pg.freshDatabase();
    const node = new Svcd({ SVC_STORE: url });
    await node.start(['core']);
    t.teardown(async () => { await node.stop(); node.cleanup(); });
    const gateway = new Svcd({
      SVC_CORE_NODES: `127.0.0.1:${node.backendPort}`, SVC_CORE_PROBE_MS: '200', SVC_LOG_LEVEL: 'info',
    });
    await gateway.start(['gateway']);
    t.teardown(async () => { await gateway.stop(); gateway.cleanup(); });
    const base = gateway.ready.http!;
    t.is((await api(base, '/readyz')).status, 200);
    const admin = await node.admin();
    t.teardown(() => admin.close());
    t.like(await admin.request('HEALTH', {}), { status: 'ok', store: { status: 'ok' } });

    pg.down();
    try {
      await until('/readyz 503', async () => (await api(base, '/readyz')).status === 503, { every: 200 });
      const h = await admin.request('HEALTH', {});
      t.is(h.status, 'unavailable');
      t.is((h.store as { status: string }).status, 'unavailable');
      t.regex(String((h.store as { reason?: string }).reason), /\S/, 'the operator is told why');
      const open = await api(base, '/api/v1/health');
      t.is(open.body.store?.status, 'unavailable', JSON.stringify(open.body));
      t.is(open.body.store?.reason, undefined, 'the public is not told why');
      await until('the gateway logs the node down, and why', () => (gateway.stdout + gateway.stderr).split('\n')
        .some((l) => l.includes('core node down') && l.includes('HEALTH status unavailable')));
      // a call that needs the database is told it is unavailable (never `internal`)
      const edge = await node.edge();
      const args = { machine_id: 'm-outage', units: 1, network: 'TRON', asset: 'USDT' };
      const refused = await edge.request('FUND_ACCOUNT', args).catch((e: unknown) => e) as { code?: string };
      edge.close();
      t.is(refused.code, 'service_unavailable', JSON.stringify(refused));
    } finally {
      pg.up();
    }
    await until('/readyz 200 again', async () => (await api(base, '/readyz')).status === 200, { every: 200 });
    t.is((await admin.request('HEALTH', {})).status, 'ok');
    t.is((await api(base, '/api/v1/hello')).status, 200);
    await until('the gateway logs the node up', () => /core node up/.test(gateway.stdout + gateway.stderr));
  });

// serial: each test stops the file's one server
testNeeding(test.serial, 'the database stopped outright three times under paid flows and pulses: each time flows and '
  + 'the pulse chain go on without a restart, only the contract\'s errors, money exact, audit clean', POSTGRES,
  async (t) => {
    t.timeout(300_000);
    const pg = await postgres();
    const url = await pg.freshDatabase();
    const node = new Svcd({ SVC_STORE: url, SVC_PULSE_PERIOD_MS: '200' });
    await node.start(['core']);
    t.teardown(async () => { await node.stop(); node.cleanup(); });
    const gateway = new Svcd({ SVC_CORE_NODES: `127.0.0.1:${node.backendPort}`, SVC_CORE_PROBE_MS: '200' });
    await gateway.start(['gateway']);
    t.teardown(async () => { await gateway.stop(); gateway.cleanup(); });
    const base = gateway.ready.http!;
    const M = 'outage-flows';
    const inv = await api(base, '/api/v1/invoices', { machine_id: M, units: 1, network: 'TRON', asset: 'USDT' });
    const admin = await node.admin();
    t.teardown(() => admin.close());
    await admin.request('SETTLE_INVOICE', { invoice_id: inv.body.invoice_id, reference: txRef(M, 'USDT_TRON') });
    const client = carefulClient(M, inv.body.machine_token as string);
    const lanes = runLanes(t, client, base, 4);
    const pulses = async () => (await admin.request('PULSE', {})) as { pulse: { index: number } };
    t.teardown(() => { // what the clients met, and why the node stopped if it did
      t.log(`${lanes.seen.length} flows; ${[...client.outcomes].map(([o, k]) => `${o}: ${k}`).join(', ')}`);
      for (const [kind, m] of client.messages) t.log(`first ${kind}: ${m}`);
      const code = node.proc?.exitCode;
      if (code !== null && code !== 0) t.log(`the node exited (${code}): ${node.stderr.slice(-3000)}`);
    });
    for (let round = 1; round <= 3; round++) {
      await lanes.progress(`flows before outage ${round}`);
      pg.down();
      await new Promise((r) => setTimeout(r, 1500));
      pg.up();
      await lanes.progress(`flows after outage ${round}`);
      const at = (await pulses()).pulse.index;
      await until(`the pulse chain goes on after outage ${round}`, async () => (await pulses()).pulse.index > at + 2);
    }
    await lanes.stop();
    // a call while the database is away: service_unavailable (the node's), or busy; the gateway's probe may
    // also find the node down (edge_unavailable when the call was lost with it)
    const contract = ['502 service_unavailable', '502 busy', '502 edge_unavailable', '409 quote_not_accepted',
      '409 idempotency_in_progress'];
    t.deepEqual([...client.refusals.keys()].filter((r) => !contract.includes(r)), [], 'only the contract\'s errors');
    // a pulse flow after the last outage runs on the chain as it now is
    const q = await api(base, '/api/v1/quotes/get-pulse', { machine_id: M, bits: 64 });
    const token = inv.body.machine_token as string;
    t.is(describe(await api(base, `/api/v1/quotes/${q.body.quote_id}/accept`, { machine_id: M }, token)), '200');
    const e = await api(base, '/api/v1/executions/get-pulse', { quote_id: q.body.quote_id, machine_id: M }, token);
    t.is(describe(e), '200', JSON.stringify(e.body));
    await gateway.stop();
    await node.stop();
    const { report: audit, forks } = await auditCluster(url);
    t.true(audit.clean, audit.discrepancies.join('\n'));
    t.true(audit.ledger.ok, audit.ledger.problems.join('; '));
    t.deepEqual(forks, [], 'one chain, unforked across the outages');
    const m = audit.machines.find((x) => x.machine_id === M)!;
    t.is(BigInt(m.available_units) + BigInt(m.reserved_units) + BigInt(m.spent_units), BigInt(m.credited_units),
      'credited = available + held + spent');
    const db = await PgStore.open(url, { poolSize: 1 });
    try {
      const stored = new Set<string>();
      for await (const k of db.keys('receipts')) stored.add(k);
      t.deepEqual(lanes.seen.filter((r) => !stored.has(r)), [], 'every receipt a client saw is stored');
    } finally {
      await db.close();
    }
  });
