// Service benchmark (npm run bench:core): the real svcd (core + gateway) on loopback, measured from
// outside. Side by side in one run: free quotes over svc/1 (TLS edge) vs over HTTP, and the whole
// paid GET_PULSE flow (quote → accept → execute, three round trips, one synced batch per money
// step) with 1, 4 and 16 concurrent machines. Prints a table and writes bench/results/core-*.json.
// Not a test: numbers depend on the disk (every money step is fsynced) and on the machine.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Svcd, fundMachine } from '../test/support/svcd.ts';

const MS = Number(process.env.BENCH_MS ?? 3000);

async function rate(concurrency: number, fn: (worker: number) => Promise<unknown>): Promise<{ perSec: number; p50: number; p99: number }> {
  const lat: number[] = [];
  const end = performance.now() + MS;
  await Promise.all(Array.from({ length: concurrency }, async (_, w) => {
    while (performance.now() < end) { const t0 = performance.now(); await fn(w); lat.push(performance.now() - t0); }
  }));
  lat.sort((a, b) => a - b);
  return { perSec: (lat.length * 1000) / MS, p50: lat[Math.floor(lat.length * 0.5)] ?? 0, p99: lat[Math.floor(lat.length * 0.99)] ?? 0 };
}

const s = await Svcd.start({ SVC_RATE_PUBLIC_LOW: '100000000/60', SVC_RATE_PAID_EXECUTION: '100000000/60', SVC_LOG_LEVEL: 'error' }, ['start']);
const rows: { case: string; transport: string; concurrency: number; perSec: number; p50: number; p99: number; unit: string }[] = [];
try {
  const edge = await Promise.all(Array.from({ length: 16 }, () => s.edge()));
  const http = s.ready.http!;
  for (const c of [1, 8]) {
    rows.push({ case: 'free quote (get-pulse)', transport: 'svc/1 TLS edge', concurrency: c, ...(await rate(c, (w) => edge[w]!.request('QUOTE', { service: 'get-pulse', machine_id: `q${w}`, bits: 256 }))), unit: 'quotes/s' });
    rows.push({ case: 'free quote (get-pulse)', transport: 'HTTP gateway', concurrency: c, ...(await rate(c, async (w) => {
      const r = await fetch(`${http}/api/v1/quotes/get-pulse`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ machine_id: `q${w}`, bits: 256 }) });
      await r.text();
    })), unit: 'quotes/s' });
  }
  const tokens = await Promise.all(Array.from({ length: 16 }, (_, i) => fundMachine(s, `paid${i}`, 1000)));
  for (const c of [1, 4, 16]) {
    rows.push({ case: 'paid GET_PULSE flow (quote+accept+execute)', transport: 'svc/1 TLS edge', concurrency: c, ...(await rate(c, async (w) => {
      const m = `paid${w}`, auth = { token: tokens[w]! };
      const q = await edge[w]!.request('QUOTE', { service: 'get-pulse', machine_id: m, bits: 256 });
      await edge[w]!.request('ACCEPT_QUOTE', { quote_id: q.quote_id, machine_id: m }, auth);
      await edge[w]!.request('GET_PULSE', { quote_id: q.quote_id, machine_id: m }, auth);
    })), unit: 'flows/s' });
  }
  edge.forEach((c) => c.close());
} finally {
  await s.stop();
  s.cleanup();
}
const fmt = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(2));
console.log(`\nsvc service benchmark — ${cpus()[0]?.model ?? 'cpu'}, ${cpus().length} cores, Node ${process.version}, ${MS} ms per row\n`);
const table = [['case', 'transport', 'callers', 'rate', 'unit', 'p50 ms', 'p99 ms'], ...rows.map((r) => [r.case, r.transport, String(r.concurrency), fmt(r.perSec), r.unit, fmt(r.p50), fmt(r.p99)])];
const w = table[0]!.map((_, i) => Math.max(...table.map((l) => l[i]!.length)));
console.log(table.map((l) => l.map((c, i) => (i >= 2 && i !== 4 ? c.padStart(w[i]!) : c.padEnd(w[i]!))).join('  ')).join('\n'));
const dir = fileURLToPath(new URL('./results/', import.meta.url));
mkdirSync(dir, { recursive: true });
const file = `${dir}core-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
writeFileSync(file, JSON.stringify({ when: new Date().toISOString(), ms_per_row: MS, rows }, null, 2));
console.log(`\nwritten: ${file}`);
