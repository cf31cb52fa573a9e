// The settlement watcher in the metrics: with the USDC_BASE watcher on a real
// node (anvil), GET /metrics shows its lag, that it is up, and when it last finished a pass; the lag
// is the one HEALTH reports, and it grows with blocks waiting for their confirmations.
import test from 'ava';
import { CONFIRMATIONS, startChain, startSvcd, waitFor, watcherEnv, watcherStatus } from './harness.ts';

async function watcherGauges(metrics: string): Promise<Record<string, number> | undefined> {
  const text = await (await fetch(`http://${metrics}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^(svc_watcher_[a-z_]+)\{rail="USDC_BASE"\} (\S+)$/gm)) out[m[1]!] = Number(m[2]);
  return out.svc_watcher_last_pass_timestamp_seconds ? out : undefined;
}

test('watcher metrics: lag in blocks, up, errors in a row, last pass, per rail', async (t) => {
  const chain = await startChain(t);
  const s = await startSvcd(t, { ...watcherEnv(chain, chain.anvil.url), SVC_METRICS_PORT: '0' });
  await chain.anvil.mine(CONFIRMATIONS + 2);
  const tip = await chain.anvil.blockNumber();
  // once a pass has scanned up to the trusted head under the new tip, the lag is the confirmations'
  const st = await waitFor('a watcher pass through the new trusted head', async () => {
    const w = await watcherStatus(s);
    return w.tip >= tip && w.state === 'ok' && w.lag_blocks === CONFIRMATIONS ? w : undefined;
  });
  const g = await waitFor('the watcher gauges', () => watcherGauges(s.ready.metrics!));
  t.is(g.svc_watcher_up, 1);
  t.is(g.svc_watcher_errors_in_a_row, 0);
  t.is(g.svc_watcher_lag_blocks, CONFIRMATIONS, 'blocks waiting for their confirmations are the lag');
  // read after HEALTH's: the same pass or a later one
  t.true(g.svc_watcher_last_pass_timestamp_seconds! >= Date.parse(st.last_pass_at) / 1000);
});
