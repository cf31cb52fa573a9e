// Sums a V8 .cpuprofile (node --cpu-prof) by function self time: each sample's time delta goes to the
// node it landed on, nodes are grouped by function name, file and line. For docs/performance.md.
// Sample times are V8's monotonic microseconds, the clock of process.hrtime on Linux, so a window
// taken in the process that drove the load selects the samples of that load only.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface SelfTime {
  fn: string;
  where: string;
  self_ms: number;
  /** share of the sampled time that was not idle */
  pct: number;
}

/**
 * Shortens a script URL to its place in this repository or in node_modules. TypeScript sources run
 * through tsx, whose transformed code the profile's lines refer to: those get the file name only.
 */
function place(url: string, line: number): string {
  if (!url) return '';
  const short = url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, '')
    .replace(/^.*\/(src|bench|test)\//, '$1/');
  return /\.ts$/.test(short) ? short : `${short}:${line + 1}`;
}

/** Self times of the samples inside window [from, to] (µs, process.hrtime's clock), or of all. */
export function selfTimes(file: string, window?: { from: number; to: number }): {
  totalMs: number; busyMs: number; top: SelfTime[];
} {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const sums = new Map<string, { fn: string; where: string; us: number }>();
  let total = 0;
  let idle = 0;
  let at = p.startTime;
  p.samples.forEach((id, i) => {
    at += p.timeDeltas[i] ?? 0;
    if (window && (at < window.from || at > window.to)) return;
    const us = p.timeDeltas[i + 1] ?? 0; // delta i+1 is the time spent in sample i
    const f = byId.get(id)!.callFrame;
    const fn = f.functionName || '(anonymous)';
    const where = place(f.url, f.lineNumber);
    const k = `${fn}|${where}`;
    const e = sums.get(k) ?? { fn, where, us: 0 };
    e.us += us;
    sums.set(k, e);
    total += us;
    if (fn === '(idle)') idle += us;
  });
  const busy = total - idle;
  const top = [...sums.values()]
    .filter((e) => e.fn !== '(idle)')
    .sort((a, b) => b.us - a.us)
    .map((e) => ({ fn: e.fn, where: e.where, self_ms: e.us / 1000, pct: busy ? (100 * e.us) / busy : 0 }));
  return { totalMs: total / 1000, busyMs: busy / 1000, top };
}

export function formatSelfTimes(title: string, s: ReturnType<typeof selfTimes>, n: number): string {
  const lines = [`${title}: ${s.busyMs.toFixed(0)} ms busy of ${s.totalMs.toFixed(0)} ms sampled`];
  lines.push('| # | self ms | % busy | function | where |');
  lines.push('|---:|---:|---:|---|---|');
  s.top.slice(0, n).forEach((e, i) => {
    lines.push(`| ${i + 1} | ${e.self_ms.toFixed(0)} | ${e.pct.toFixed(1)} | \`${e.fn}\` | ${e.where} |`);
  });
  return lines.join('\n');
}
