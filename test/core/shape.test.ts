// The core's shape, measured from the code: commands are found through a table checked against the
// registry (no switch over command names), src/core has no import circles, and core.ts stays the
// door it is (the gate, idempotency and handlers live in their own modules).
import test from 'ava';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HANDLERS, commandTable } from '../../src/core/commands/index.ts';
import { ALL_COMMANDS } from '../../src/protocol/registry.ts';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : /\.ts$/.test(n) ? [p] : [];
  });
}

/** Every relative import (type imports too: a circle of types still ties the files together). */
function importsOf(file: string): string[] {
  const re = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+'(\.[^']+)'|import\('(\.[^']+)'\)/g;
  return [...readFileSync(file, 'utf8').matchAll(re)].map((m) => resolve(dirname(file), m[1] ?? m[2]!));
}

/** The strongly connected components of more than one file (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>(), low = new Map<string, number>();
  const stack: string[] = [], on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next); low.set(v, next); next++;
    stack.push(v); on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)); }
      else if (on.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const comp: string[] = [];
    let w: string;
    do { w = stack.pop()!; on.delete(w); comp.push(relative(SRC, w)); } while (w !== v);
    if (comp.length > 1) out.push(comp);
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

test('src/core has no import circles', (t) => {
  const core = files(join(SRC, 'core'));
  const graph = new Map(core.map((f) => [f, importsOf(f)]));
  t.true([...graph.values()].flat().length > 100, 'the imports were read');
  t.deepEqual(circles(graph), []);
  // the finder finds one when there is one
  t.deepEqual(circles(new Map([[`${SRC}a`, [`${SRC}b`]], [`${SRC}b`, [`${SRC}a`]]])).length, 1);
});

test('core.ts is the door only: at most 250 lines', (t) => {
  const lines = readFileSync(join(SRC, 'core/core.ts'), 'utf8').split('\n').length;
  t.true(lines <= 250, `core.ts has ${lines} lines`);
});

test('no switch over command names in src/: commands are found through the table', (t) => {
  const names = new Set(ALL_COMMANDS.map((c) => c.name));
  const found: string[] = [];
  for (const f of files(SRC)) {
    for (const m of readFileSync(f, 'utf8').matchAll(/\bcase\s+'([A-Z_]+)'\s*:/g)) {
      if (names.has(m[1]!)) found.push(`${relative(SRC, f)}: case '${m[1]}'`);
    }
  }
  t.deepEqual(found, []);
});

test('the command table holds one handler for every registry command, and nothing else', (t) => {
  t.deepEqual([...HANDLERS.keys()].sort(), ALL_COMMANDS.map((c) => c.name).sort());
});

test('a table that disagrees with the registry does not load', (t) => {
  const h = () => ({});
  t.throws(() => commandTable([{ A: h }], ['A', 'B']), { message: /no handler for \[B\]/ });
  t.throws(() => commandTable([{ A: h, C: h }], ['A']), { message: /no command for \[C\]/ });
  t.throws(() => commandTable([{ A: h }, { A: h }], ['A']), { message: /A has two handlers/ });
  t.is(commandTable([{ A: h }], ['A']).get('A'), h);
});

test('records are typed where they are read and written: fewer than 10 `as unknown as` casts in src/', (t) => {
  const found = files(SRC).flatMap((f) => readFileSync(f, 'utf8').split('\n')
    .filter((l) => l.includes('as unknown as')).map((l) => `${relative(SRC, f)}: ${l.trim()}`));
  t.true(found.length < 10, found.join('\n'));
});

test('the core never asks which store engine it has: no engine checks outside src/store', (t) => {
  const found = files(SRC).filter((f) => !relative(SRC, f).startsWith('store/')).flatMap((f) =>
    readFileSync(f, 'utf8').split('\n').filter((l) => /\bstore\.shared\b|instanceof (LevelStore|PgStore)/.test(l))
      .map((l) => `${relative(SRC, f)}: ${l.trim()}`));
  t.deepEqual(found, []);
});

test('names the registry gives are written there only: CLI command names, the sandbox\'s and registry routes\' paths',
  (t) => {
    const svc = readFileSync(join(SRC, 'cli/svc.ts'), 'utf8');
    const typed = ALL_COMMANDS.flatMap((c) => c.cli).filter((n) => svc.includes(`command('${n}')`));
    t.deepEqual(typed, [], 'svc.ts names these commands by hand');
    const paths = ALL_COMMANDS.flatMap((c) => [c.http?.path, c.gatewayRoute?.path]).filter((p) => p !== undefined);
    const elsewhere = files(join(SRC, 'gateway')).flatMap((f) => paths
      .filter((p) => readFileSync(f, 'utf8').includes(`'${p}'`)).map((p) => `${relative(SRC, f)}: ${p}`));
    t.deepEqual(elsewhere, [], 'the gateway writes these registry paths by hand');
  });
