// A node whose database goes away says so: HEALTH answers `unavailable` (why, on the admin socket only), a
// gateway's /readyz turns 503 (so a load balancer sends no traffic there) and its probe marks the node
// down naming why; when the database is back, all three are back without a restart.
import test from 'ava';
import { api } from '../support/cluster.ts';
import { testNeeding } from '../support/needs.ts';
import { POSTGRES, postgresForFile } from '../support/postgres.ts';
import { Svcd } from '../support/svcd.ts';
import { until } from '../support/until.ts';

const postgres = postgresForFile(test);

testNeeding(test, 'the database down: HEALTH unavailable, /readyz 503, the node marked down; back: all serve',
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
