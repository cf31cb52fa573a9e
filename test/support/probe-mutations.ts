// Hand mutation probe: breaks one guard at a time (test/guards/mutations.ts), runs the test that is
// meant to pin it, and reports whether that test failed (killed) or not (survived). The source file
// is restored after every run, also on Ctrl-C, and the probe refuses to start on a dirty file.
//   node --import tsx test/support/probe-mutations.ts            all mutations
//   node --import tsx test/support/probe-mutations.ts ID...      only these
//   node --import tsx test/support/probe-mutations.ts --table    print the docs/testing.md table
// One ava run per mutation, one at a time: cheap enough for a shared 2-core box, unlike Stryker.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MUTATIONS, type Mutation } from '../guards/mutations.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export function applyMutation(m: Mutation, source: string): string {
  const at = source.indexOf(m.from);
  if (at < 0 || source.indexOf(m.from, at + 1) >= 0) {
    throw new Error(`${m.id}: the text to mutate must occur exactly once in ${m.file}`);
  }
  return source.slice(0, at) + m.to + source.slice(at + m.from.length);
}

export function table(): string {
  const rows = MUTATIONS.map((m) => `| ${m.guard} | \`${m.file}\`: ${m.fn} | \`${m.test}\`: ${m.title} |`);
  return ['| guard | file: function | test that fails when it breaks |', '|---|---|---|', ...rows].join('\n');
}

let restoreCurrent: (() => void) | null = null;

function probe(m: Mutation): { killed: boolean; output: string } {
  const path = join(ROOT, m.file);
  const original = readFileSync(path, 'utf8');
  const dirty = spawnSync('git', ['diff', '--quiet', '--', m.file], { cwd: ROOT });
  if (dirty.status !== 0) throw new Error(`${m.file} has uncommitted changes: commit or stash them first`);
  const restore = () => { writeFileSync(path, original); restoreCurrent = null; };
  restoreCurrent = restore;
  writeFileSync(path, applyMutation(m, original));
  try {
    const r = spawnSync('npx', ['ava', m.test, '--match', m.title, '--timeout', '2m'], {
      cwd: ROOT, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0' },
    });
    const output = `${r.stdout}${r.stderr}`;
    // a run that matched no test proves nothing: count it as survived
    const ran = !/Couldn.t find any matching tests/.test(output);
    return { killed: ran && r.status !== 0, output };
  } finally {
    restore();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.on('SIGINT', () => { restoreCurrent?.(); process.exit(130); });
  const args = process.argv.slice(2);
  if (args.includes('--table')) {
    console.log(table());
  } else {
    const chosen = args.length ? MUTATIONS.filter((m) => args.includes(m.id)) : MUTATIONS;
    let survived = 0;
    for (const m of chosen) {
      const r = probe(m);
      if (!r.killed) survived++;
      console.log(`${r.killed ? 'killed  ' : 'SURVIVED'} ${m.id}  (${m.file}; ${m.test})`);
      if (!r.killed && process.env.PROBE_VERBOSE) console.log(r.output);
    }
    console.log(`${chosen.length - survived} of ${chosen.length} mutations killed`);
    process.exitCode = survived ? 1 : 0;
  }
}
