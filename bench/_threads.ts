import { readdirSync, readFileSync } from 'node:fs';
import { startSvcd, fundMachines } from './service/servers.ts';
import { loadFlows } from './service/load.ts';
function threads(pid: number) {
  const m = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const s = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      m.set(tid, (Number(f[11]) + Number(f[12])) * 10);
    } catch {}
  }
  return m;
}
const s = await startSvcd('svcd', 0);
const machines = await fundMachines(s.core, 32);
await loadFlows(s.urls, machines, 32, { units: 3000 });
const a = threads(s.pid);
const r = await loadFlows(s.urls, machines, 32, { units: Number(process.env.XFLOWS ?? 12000) });
const b = threads(s.pid);
const rows = [...b].map(([k, v]) => [k, (v - (a.get(k) ?? 0)) * 1000 / r.count] as const).filter(([, v]) => v > 0).sort((x, y) => y[1] - x[1]);
console.log('flows', r.count, 'rate', r.rate.toFixed(0), 'total', rows.reduce((s, [, v]) => s + v, 0).toFixed(0));
console.log(rows.map(([k, v]) => `${k}(${readFileSync(`/proc/${s.pid}/task/${k}/comm`, 'utf8').trim()}):${v.toFixed(0)}`).join(' '));
await s.stop();
process.exit(0);
