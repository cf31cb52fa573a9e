// `npm run bench:service -- --profile DIR`: svcd under V8's sampling profiler (cpu-prof-preload.mjs,
// through NODE_OPTIONS, so the harness starts it as usual) while autocannon loads one path at c = 32,
// free quotes, then paid flows; prints the top self-time functions of svcd's main thread during the
// measured load (start-up, funding and warm-up samples are left out by time window).
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatSelfTimes, selfTimes } from './cpu-profile.ts';
import { QUOTE_BODY, QUOTE_PATH, loadFlows, loadRequests } from './load.ts';
import { fundMachines, startSvcd } from './servers.ts';

const TOP = 15;
const PRELOAD = fileURLToPath(new URL('./cpu-prof-preload.mjs', import.meta.url));

/**
 * The profiles in dir, one per svcd process (the preload profiles each one's main thread): the primary's
 * (`pid`) first, then its gateway workers' (they inherit NODE_OPTIONS).
 */
function profiles(dir: string, pid: number): { file: string; who: string }[] {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(dir, f));
  if (files.length === 0) throw new Error(`no .cpuprofile in ${dir}`);
  const primary = join(dir, `svcd-${pid}.cpuprofile`);
  const rest = files.filter((f) => f !== primary).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  return [...(files.includes(primary) ? [{ file: primary, who: 'main thread' }] : []),
    ...rest.map((file) => ({ file, who: `gateway worker ${/svcd-(\d+)/.exec(file)![1]}` }))];
}

/** `gateways`: SVC_GATEWAY_PROCESSES of the svcd profiled (`--gateways`, its first value; default 0). */
export async function profileSvcd(dir: string, ms: number, warmupMs: number, gateways = 0): Promise<void> {
  const summary: Record<string, unknown> = {};
  for (const path of ['free', 'paid'] as const) {
    const out = join(dir, path);
    const env = { NODE_OPTIONS: `--import=${PRELOAD}`, BENCH_CPU_PROF_DIR: out };
    const s = await startSvcd(gateways ? `svcd K=${gateways}` : 'svcd', gateways, env);
    let result;
    const now = () => Number(process.hrtime.bigint() / 1000n);
    const window = { from: 0, to: 0 };
    try {
      if (path === 'free') {
        await loadRequests(s.urls[0]!, QUOTE_PATH, QUOTE_BODY, 8, { ms: warmupMs });
        window.from = now();
        result = await loadRequests(s.urls[0]!, QUOTE_PATH, QUOTE_BODY, 32, { ms });
        window.to = now();
      } else {
        const machines = await fundMachines(s.core, 32);
        await loadFlows(s.urls, machines, 8, { ms: warmupMs });
        window.from = now();
        result = await loadFlows(s.urls, machines, 32, { ms });
        window.to = now();
      }
    } finally {
      await s.stop(); // SIGTERM: svcd exits through process.exit, which writes the profile
    }
    const title = path === 'free'
      ? `HTTP free quote, c = 32, ${result.rate.toFixed(0)} req/s`
      : `paid GET_PULSE flow, c = 32, ${result.rate.toFixed(0)} flows/s`;
    const processes = profiles(out, s.pid).map(({ file, who }) => {
      const st = selfTimes(file, window);
      console.log(`\n${formatSelfTimes(`${title}, ${who}`, st, TOP)}\n(profile: ${file}; the measured ${ms} ms only)`);
      return { who, file, busy_ms: st.busyMs, total_ms: st.totalMs, top: st.top.slice(0, 40) };
    });
    // the primary's own fields as before (runs saved earlier have only these), every process beside them
    const { who: _w, ...main } = processes[0]!;
    summary[path] = { ...main, rate: result.rate, processes };
  }
  writeFileSync(join(dir, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');
  console.log(`\nwritten: ${join(dir, 'summary.json')}`);
}
