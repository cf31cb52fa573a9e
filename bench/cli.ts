// The command line every bench shares (docs/bench.md): --help, --quick, --json (the run as
// JSON on stdout, the table on stderr), --out FILE, --sizes, --compare OLD.json; an unknown flag is a
// usage error (exit 2 with the usage), as in the CLIs. Each bench adds its own options.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, platform, release, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

export const COMMON_OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  quick: { type: 'boolean' },
  json: { type: 'boolean' },
  out: { type: 'string' },
  sizes: { type: 'string' },
  compare: { type: 'string' },
} as const satisfies Options;

export const COMMON_USAGE = `
Common options:
  -h, --help         this help
  --quick            short rows, one process or round: a smoke run, not a measurement
  --json             the run as JSON on stdout (the table goes to stderr)
  --out FILE         write the run's JSON to FILE (default: bench/results/<bench>-<time>.json)
  --sizes LIST       input sizes, comma separated: bytes or with a unit (64,1KiB,8KiB,1MiB)
  --compare OLD.json print each row's ratio against a saved run of the same bench (new / old)`;

/**
 * Parses argv for a bench: prints the usage and exits 0 on --help, exits 2 with the usage on an
 * unknown or malformed flag (parseArgs in strict mode), returns the values otherwise.
 */
export function benchArgs<O extends Options>(
  usage: string, options: O, argv: string[] = process.argv.slice(2),
): ReturnType<typeof parseArgs<{ options: O & typeof COMMON_OPTIONS; strict: true }>>['values'] {
  const text = `${usage.trimEnd()}\n${COMMON_USAGE}\n`;
  let parsed: { values: Record<string, unknown> };
  try {
    parsed = parseArgs({ args: argv, options: { ...COMMON_OPTIONS, ...options }, strict: true });
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n\n${text}`);
    process.exit(2);
  }
  if (parsed.values.help) {
    process.stdout.write(text);
    process.exit(0);
  }
  return parsed.values as never;
}

const UNITS: Record<string, number> = { '': 1, b: 1, kib: 1024, k: 1024, mib: 1 << 20, m: 1 << 20 };

/** "64,1KiB,8KiB,1MiB" → [64, 1024, 8192, 1048576]; throws naming the bad entry. */
export function parseSizes(list: string, max = 1 << 26): number[] {
  return list.split(',').map((raw) => {
    const m = /^\s*(\d+)\s*([a-z]*)\s*$/i.exec(raw);
    const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
    const n = m && unit ? Number(m[1]) * unit : NaN;
    if (!Number.isSafeInteger(n) || n < 1 || n > max) {
      throw new Error(`--sizes: ${JSON.stringify(raw)} is not a size from 1 B to ${max} B (e.g. 64, 8KiB, 1MiB)`);
    }
    return n;
  });
}

/** 1048576 → "1 MiB", 8192 → "8 KiB", 100 → "100 B": the row labels. */
export function sizeLabel(n: number): string {
  if (n >= 1 << 20 && n % (1 << 20) === 0) return `${n / (1 << 20)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} B`;
}

/** A saved run, or an exit-2 usage error naming the file. */
export function readSaved<T>(file: string, kind: string): T {
  let run: { kind?: string };
  try {
    run = JSON.parse(readFileSync(file, 'utf8')) as { kind?: string };
  } catch (e) {
    process.stderr.write(`--compare: cannot read ${file}: ${(e as Error).message}\n`);
    process.exit(2);
  }
  if (run.kind !== kind) {
    process.stderr.write(`--compare: ${file} is not a ${kind} run (kind ${JSON.stringify(run.kind)})\n`);
    process.exit(2);
  }
  return run as T;
}

/** "1.05x" (new / old), or "" when the saved run lacks the row. */
export function ratioCell(now: number, old: number | undefined): string {
  return old === undefined || !(old > 0) ? '' : `${(now / old).toFixed(2)}x`;
}

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** git in the repository; 'unknown' when git or the repository is missing (a copied tree). */
export function git(args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

/** The machine and tree a run was measured on: the `machine` object of every run's JSON. */
export function machineInfo(): Record<string, unknown> {
  const dirty = git(['status', '--porcelain', '--untracked-files=no']) !== '';
  return {
    cpus: cpus().length,
    cpu_model: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    platform: `${platform()} ${release()}`,
    mem_gib: Math.round(totalmem() / 2 ** 30),
    commit: `${git(['rev-parse', '--short', 'HEAD'])}${dirty ? '+dirty' : ''}`,
    loadavg_start: loadavgNow(),
  };
}

/** The 1, 5 and 15 minute load averages, as the runs record them. */
export const loadavgNow = (): string => loadavg().map((x) => x.toFixed(2)).join(' ');

/** Progress on stderr with the seconds since `t0`, so stdout keeps the table only. */
export function progressFrom(t0: number): (what: string) => void {
  return (what) => {
    process.stderr.write(`[${((performance.now() - t0) / 1000).toFixed(1)} s] ${what}\n`);
  };
}

/**
 * Writes the run: to --out, else to BENCH_RESULTS_DIR (default bench/results) as <bench>-<time>.json.
 * With --json the run goes to stdout and the table was printed on stderr. Returns the file.
 */
export function writeRun(bench: string, run: { when: string }, out: string | undefined, json: boolean): string {
  const file = out ?? join(process.env.BENCH_RESULTS_DIR || join(ROOT, 'bench/results'),
    `${bench}-${run.when.replace(/[:.]/g, '-')}.json`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(run, null, 2) + '\n');
  if (json) process.stdout.write(JSON.stringify(run) + '\n');
  return file;
}
