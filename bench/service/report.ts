// The service bench's output: the row and run shapes written to bench/results/service-*.json, the
// table printed from them, and the comparison with a saved run. Pure: no servers, no timing.

export interface Row {
  case: string;
  server: string;
  c: number;
  unit: string;
  /** median over rounds */
  rate: number;
  /** median over rounds; per request (free) or per flow (paid), see `latency` */
  p50_ms: number;
  p99_ms: number;
  latency: 'request' | 'flow';
  req_per_s: number;
  errors: number;
  non2xx: number;
  /** the server this row is compared with, and the median over rounds of rate / its rate in the round */
  anchor: string | null;
  ratio: number | null;
  target: string | null;
  met: boolean | null;
  /** the rate of each round, in order */
  rounds: number[];
}

export interface Measure {
  name: string;
  value: number | null;
  unit: string;
  target: string | null;
  met: boolean | null;
  note?: string;
}

export interface Run {
  kind: 'svc-service-bench';
  version: 1;
  when: string;
  machine: Record<string, unknown>;
  settings: Record<string, unknown>;
  rows: Row[];
  measures: Measure[];
  details: Record<string, unknown>;
}

export const ROW_KEYS: readonly (keyof Row)[] = [
  'case', 'server', 'c', 'unit', 'rate', 'p50_ms', 'p99_ms', 'latency', 'req_per_s',
  'errors', 'non2xx', 'anchor', 'ratio', 'target', 'met', 'rounds',
];

export const TABLE_HEADINGS = [
  'case', 'server', 'c', 'rate', 'unit', 'p50 ms', 'p99 ms', 'err/non-2xx', 'ratio', 'vs', 'target', 'met',
];

export const MEASURE_HEADINGS = ['measure', 'value', 'unit', 'target', 'met'];

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

const num = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));
const yesNo = (m: boolean | null) => (m === null ? '' : m ? 'yes' : 'NO');
const rowKey = (r: Pick<Row, 'case' | 'server' | 'c'>) => `${r.case}|${r.server}|${r.c}`;

function pct(now: number, then: number | undefined): string {
  if (then === undefined || then === 0) return 'n/a';
  const d = (now / then - 1) * 100;
  return `${d >= 0 ? '+' : ''}${d.toFixed(1)}%`;
}

function layout(table: string[][], rightFrom: Set<number>): string {
  const widths = table[0]!.map((_, i) => Math.max(...table.map((l) => l[i]!.length)));
  const line = (l: string[]) => l.map((c, i) => (rightFrom.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)));
  return table.map((l) => line(l).join('  ').trimEnd()).join('\n');
}

/**
 * Servers that runs saved before a rename called otherwise: K = 2 gateways were `svcd core` and two
 * `svcd gateway` processes, now `svcd start` with SVC_GATEWAY_PROCESSES=2 (the same topology).
 */
const RENAMED: Record<string, string> = { 'svcd core+2gw': 'svcd K=2' };

/** The throughput table and the measures table; with `saved`, a Δ column for rate (and value). */
export function formatRun(run: Run, saved?: Run): string {
  const old = new Map((saved?.rows ?? []).map((r) => [rowKey({ ...r, server: RENAMED[r.server] ?? r.server }), r]));
  const head = saved ? [...TABLE_HEADINGS, 'Δ rate', 'Δ p99'] : TABLE_HEADINGS;
  const rows = run.rows.map((r) => {
    const cells = [
      r.case,
      r.server,
      String(r.c),
      num(r.rate),
      r.unit,
      num(r.p50_ms),
      num(r.p99_ms),
      `${r.errors}/${r.non2xx}`,
      r.ratio === null ? '' : `${r.ratio.toFixed(2)}x`,
      r.anchor ?? '',
      r.target ?? '',
      yesNo(r.met),
    ];
    const o = old.get(rowKey(r));
    return saved ? [...cells, pct(r.rate, o?.rate), pct(r.p99_ms, o?.p99_ms)] : cells;
  });
  const oldM = new Map((saved?.measures ?? []).map((m) => [m.name, m]));
  const mHead = saved ? [...MEASURE_HEADINGS, 'Δ value'] : MEASURE_HEADINGS;
  const measures = run.measures.map((m) => {
    const cells = [m.name, m.value === null ? 'n/a' : num(m.value), m.unit, m.target ?? '', yesNo(m.met)];
    const o = oldM.get(m.name);
    return saved ? [...cells, m.value === null ? 'n/a' : pct(m.value, o?.value ?? undefined)] : cells;
  });
  const notes = run.measures.filter((m) => m.note).map((m) => `  ${m.name}: ${m.note}`);
  return [
    layout([head, ...rows], new Set([2, 3, 5, 6, 7, 8, ...(saved ? [12, 13] : [])])),
    '',
    layout([mHead, ...measures], new Set([1, ...(saved ? [5] : [])])),
    ...(notes.length ? ['', ...notes] : []),
  ].join('\n');
}

export function machineLine(run: Run): string {
  const m = run.machine;
  const s = run.settings;
  return `svc service benchmark — ${String(m.cpu_model)}, ${String(m.cpus)} cores, Node ${String(m.node)}, `
    + `commit ${String(m.commit)}, load avg ${String(m.loadavg_start)}; `
    + `${String(s.ms)} ms × ${String(s.rounds)} rounds`;
}
