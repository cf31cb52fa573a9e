import { readdirSync, readFileSync } from 'node:fs';
import { startSvcd, startAnchor, fundMachines, anchorMachines } from './service/servers.ts';
import { loadFlows } from './service/load.ts';
const TICK = 10;
function threads(pid: number) {
  const m = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const s = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = s.slice(s.indexOf('(') + 1, s.lastIndexOf(')'));
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      m.set(`${tid}:${name}`, (Number(f[11]) + Number(f[12])) * TICK);
    } catch {}
  }
  return m;
}
const which = process.argv[2] ?? 'svcd';
const s = which === 'svcd' ? await startSvcd('svcd', 0) : await startAnchor('a', 'paid');
const machines = which === 'svcd' ? await fundMachines((s as any).core, 32) : anchorMachines(32);
await loadFlows(s.urls, machines, 32, { units: 500 });
const a = threads(s.pid);
const r = await loadFlows(s.urls, machines, 32, { units: 4000 });
const b = threads(s.pid);
const byName = new Map<string, number>();
for (const [k, v] of b) { const name = k.split(':')[1]!; byName.set(name, (byName.get(name) ?? 0) + (v - (a.get(k) ?? 0))); }
console.log(which, 'flows', r.count, 'rate', r.rate.toFixed(0));
for (const [n, ms] of [...byName].sort((x, y) => y[1] - x[1])) if (ms > 0) console.log(n.padEnd(20), (ms * 1000 / r.count).toFixed(1), 'us/flow');
await s.stop();
process.exit(0);
