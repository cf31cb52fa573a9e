// The metric families the hot path records into (src/metrics/metrics.ts): one cell per label
// combination, found again without building anything; rendered by prom-client in the text format
// with cumulative histogram buckets; and merged across processes by AggregatorRegistry.aggregate
// as the cluster scrape does.
import test from 'ava';
import { AggregatorRegistry } from 'prom-client';
import { CellFamily, HistogramFamily, observe, registry } from '../../src/metrics/metrics.ts';

const lines = (text: string, name: string) => text.split('\n').filter((l) => l.startsWith(name));

test('a label combination has one cell, kept; every combination renders with its labels', async (t) => {
  const f = new CellFamily('test_cells_total', 'test counter', ['route', 'method', 'status']);
  const a = f.at('/x/:id', 'GET', 200);
  t.is(f.at('/x/:id', 'GET', 200), a);
  t.not(f.at('/x/:id', 'GET', 404), a);
  t.not(f.at('/x/:id', 'POST', 200), a);
  a.v += 2;
  f.at('/x/:id', 'GET', 404).v++;
  const text = await registry.metrics();
  t.true(text.includes('# TYPE test_cells_total counter'));
  t.deepEqual(lines(text, 'test_cells_total{').sort(), [
    'test_cells_total{route="/x/:id",method="GET",status="200"} 2',
    'test_cells_total{route="/x/:id",method="GET",status="404"} 1',
    'test_cells_total{route="/x/:id",method="POST",status="200"} 0',
  ]);
  const none = new CellFamily('test_unlabelled_total', 'no labels', []);
  none.at().v++;
  t.is(none.at(), none.at());
  t.deepEqual(lines(await registry.metrics(), 'test_unlabelled_total '), ['test_unlabelled_total 1']);
});

test('a histogram renders cumulative buckets, +Inf, sum and count', async (t) => {
  const h = new HistogramFamily('test_latency_seconds', 'test histogram', ['op'], [0.1, 1]);
  const c = h.at('sha');
  for (const v of [0.05, 0.1, 0.5, 3]) observe(c, v);
  t.is(h.at('sha'), c);
  const text = await registry.metrics();
  t.true(text.includes('# TYPE test_latency_seconds histogram'));
  t.deepEqual(lines(text, 'test_latency_seconds'), [
    'test_latency_seconds_bucket{op="sha",le="0.1"} 2',
    'test_latency_seconds_bucket{op="sha",le="1"} 3',
    'test_latency_seconds_bucket{op="sha",le="+Inf"} 4',
    'test_latency_seconds_sum{op="sha"} 3.65',
    'test_latency_seconds_count{op="sha"} 4',
  ]);
});

test('two processes\' registries merge: counters and histogram series summed per label set', async (t) => {
  const f = new CellFamily('test_merged_total', 'merged', ['k']);
  f.at('a').v = 3;
  const h = new HistogramFamily('test_merged_seconds', 'merged', [], [1]);
  observe(h.at(), 0.5);
  const one = await registry.getMetricsAsJSON();
  const text = await AggregatorRegistry.aggregate([one, structuredClone(one)]).metrics();
  t.deepEqual(lines(text, 'test_merged_total{'), ['test_merged_total{k="a"} 6']);
  t.deepEqual(lines(text, 'test_merged_seconds_count'), ['test_merged_seconds_count 2']);
  t.deepEqual(lines(text, 'test_merged_seconds_bucket{le="1"}'), ['test_merged_seconds_bucket{le="1"} 2']);
});
