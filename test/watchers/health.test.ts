// Watcher health an on-call engineer can alert on, against real anvil nodes: an RPC whose trusted head is
// below the stored cursor (a new provider behind the old one) is `behind` with svc_watcher_up 0, never
// `ok` with lag 0; through an RPC outage the watcher is down and the age of its last good pass grows (the lag,
// measured at that pass, stands still), and both clear when the RPC is back.
import test from 'ava';
import { RpcProxy } from '../support/anvil.ts';
import { CONFIRMATIONS, startChain, startSvcd, scannedThrough, waitFor, watcherEnv, watcherStatus } from './harness.ts';

async function gauges(metrics: string): Promise<Record<string, number>> {
  const text = await (await fetch(`http://${metrics}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^(svc_watcher_[a-z_]+)\{rail="USDC_BASE"\} (\S+)$/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

test('watcher health: a new RPC behind the stored cursor is behind and down, not ok; a good pass clears it',
  async (t) => {
    const first = await startChain(t);
    const s = await startSvcd(t, { ...watcherEnv(first, first.anvil.url), SVC_METRICS_PORT: '0' });
    await first.anvil.mine(40);
    const through = (await first.anvil.blockNumber()) - CONFIRMATIONS;
    await scannedThrough(s, through);
    await s.stop();
    // another provider of the same chain id, far behind the blocks this node has read
    const second = await startChain(t);
    t.true((await second.anvil.blockNumber()) < through);
    Object.assign(s.env, watcherEnv(second, second.anvil.url, { SVC_WATCH_USDC_BASE_FROM_BLOCK: '0' }));
    await s.start();
    const behind = await waitFor('the watcher to say it is behind', async () => {
      const w = await watcherStatus(s);
      return w.state === 'behind' ? w : undefined;
    });
    t.regex(behind.last_error, /trusted head \d+ is below the stored cursor \d+/);
    t.is(behind.last_pass_at, null, 'no good pass since the start');
    const g = await gauges(s.ready.metrics!);
    t.is(g.svc_watcher_up, 0);
    t.true(g.svc_watcher_errors_in_a_row! >= 1);
    // once the new provider has passed the cursor, the watcher is ok again
    await second.anvil.mine(through + CONFIRMATIONS + 5 - (await second.anvil.blockNumber()));
    const ok = await waitFor('the watcher to be ok again', async () => {
      const w = await watcherStatus(s);
      return w.state === 'ok' ? w : undefined;
    });
    t.truthy(ok.last_pass_at);
    const after = await gauges(s.ready.metrics!);
    t.is(after.svc_watcher_up, 1);
    t.true(after.svc_watcher_last_pass_age_seconds! < 30, String(after.svc_watcher_last_pass_age_seconds));
  });

test('watcher health: an RPC outage is down with a growing last-pass age; recovery clears both', async (t) => {
  const chain = await startChain(t);
  const proxy = await RpcProxy.start(chain.anvil.url);
  t.teardown(() => proxy.close());
  const s = await startSvcd(t, { ...watcherEnv(chain, proxy.url), SVC_METRICS_PORT: '0' });
  await waitFor('a first good pass', async () => ((await watcherStatus(s)).state === 'ok' ? true : undefined));
  proxy.down = true;
  // alert-worthy: down, and the last good pass older and older (whatever the machine's speed: it only grows)
  const first = await waitFor('the watcher down', async () => {
    const g = await gauges(s.ready.metrics!);
    return g.svc_watcher_up === 0 ? g : undefined;
  });
  const later = await waitFor('the last good pass to age', async () => {
    const g = await gauges(s.ready.metrics!);
    return g.svc_watcher_last_pass_age_seconds! >= first.svc_watcher_last_pass_age_seconds! + 3 ? g : undefined;
  });
  t.is(later.svc_watcher_up, 0);
  t.regex((await watcherStatus(s)).last_error, /HTTP 503/);
  proxy.down = false;
  const back = await waitFor('the watcher up again', async () => {
    const g = await gauges(s.ready.metrics!);
    return g.svc_watcher_up === 1 ? g : undefined;
  });
  t.true(back.svc_watcher_last_pass_age_seconds! < later.svc_watcher_last_pass_age_seconds!, 'a fresh good pass');
  t.is(back.svc_watcher_errors_in_a_row, 0);
});
