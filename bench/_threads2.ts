import { readdirSync, readFileSync } from 'node:fs';
import { startSvcd, fundMachines } from './service/servers.ts';
import { loadFlows } from './service/load.ts';
const s = await startSvcd('svcd', 0);
const machines = await fundMachines(s.core, 32);
const tids = readdirSync(`/proc/${s.pid}/task`);
console.log('tids after start', tids.join(' '));
const load = loadFlows(s.urls, machines, 32, { units: 12000 });
const counts = new Map<string, Map<string, number>>();
const t0 = Date.now();
while (Date.now() - t0 < 5000) {
  for (const tid of readdirSync(`/proc/${s.pid}/task`)) {
    try {
      const sc = readFileSync(`/proc/${s.pid}/task/${tid}/syscall`, 'utf8').split(' ')[0]!;
      const m = counts.get(tid) ?? new Map(); m.set(sc, (m.get(sc) ?? 0) + 1); counts.set(tid, m);
    } catch {}
  }
  await new Promise((r) => setTimeout(r, 2));
}
await load;
for (const [tid, m] of counts) console.log(tid, [...m].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([k, v]) => `${k}:${v}`).join(' '));
await s.stop();
process.exit(0);
