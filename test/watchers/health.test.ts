// Watcher health an on-call engineer can alert on, against real anvil nodes: an RPC whose trusted head is
// below the stored cursor (a new provider behind the old one) is `behind` with svc_watcher_up 0, never
// `ok` with lag 0; the age of the last good pass grows while passes fail, and clears when they succeed.
import test from 'ava';
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
