// The ```sh blocks of README.md and docs/*.md as a user meets them: what test/docs/doc-blocks.test.ts lists
// (each block must name the test that runs it) and what the tests that run a block as written read.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export interface ShBlock {
  /** path from the repository root: `README.md`, `docs/operations.md` */
  file: string;
  /** 1-based line of the opening fence */
  line: number;
  /** the nearest heading above the block, as written (`## Quick start`, `### Restore drill`) */
  heading: string;
  /** the block's first line */
  first: string;
  body: string;
  /** its commands: one per logical line (`\` continuations joined), comments and blank lines left out */
  commands: string[];
}

/** Every markdown file whose blocks a user is told to paste. */
export function docFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort();
  return ['README.md', ...docs.map((f) => `docs/${f}`)];
}

/** A command line without its trailing `# comment` (a ` #` outside quotes), trimmed. */
export function stripComment(line: string): string {
  let quote = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) { if (c === quote) quote = ''; continue; }
    if (c === '\'' || c === '"') quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i).trim();
  }
  return line.trim();
}

function commandsOf(body: string): string[] {
  const out: string[] = [];
  let pending = '';
  for (const raw of body.split('\n')) {
    const line = stripComment(raw);
    if (!pending && !line) continue;
    if (line.endsWith('\\')) { pending += line.slice(0, -1).trimEnd() + ' '; continue; }
    out.push((pending + line).trim());
    pending = '';
  }
  return out.filter(Boolean);
}

export function shBlocksOf(file: string): ShBlock[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const blocks: ShBlock[] = [];
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (/^#{1,6} /.test(l)) heading = l;
    if (!l.startsWith('```')) continue;
    const end = lines.findIndex((x, j) => j > i && x.startsWith('```'));
    if (end < 0) throw new Error(`${file}:${i + 1}: unclosed code fence`);
    if (l === '```sh') {
      const body = lines.slice(i + 1, end).join('\n') + '\n';
      blocks.push({ file, line: i + 1, heading, first: lines[i + 1] ?? '', body, commands: commandsOf(body) });
    }
    i = end;
  }
  return blocks;
}

/** Every code fence of `file`: its language (`''` when none), opening line and first line. */
export function fencesOf(file: string): { file: string; lang: string; line: number; first: string }[] {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const out: { file: string; lang: string; line: number; first: string }[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.startsWith('```')) continue;
    const end = lines.findIndex((x, j) => j > i && x.startsWith('```'));
    out.push({ file, lang: lines[i]!.slice(3).trim(), line: i + 1, first: lines[i + 1] ?? '' });
    i = end < 0 ? lines.length : end;
  }
  return out;
}

export function allShBlocks(): ShBlock[] {
  return docFiles().flatMap(shBlocksOf);
}

/** The one ```sh block of `file` whose first line starts with `marker` (throws when none or several). */
export function docBlock(file: string, marker: string): ShBlock {
  const found = shBlocksOf(file).filter((b) => b.first.startsWith(marker));
  if (found.length !== 1) throw new Error(`${file}: ${found.length} sh blocks start with ${JSON.stringify(marker)}`);
  return found[0]!;
}

export interface Ran { code: number; stdout: string; stderr: string }

/** Runs `script` in bash under `set -euo pipefail` (and `set -x`, so a failure shows its step). */
export function bash(script: string, opts: { cwd: string; env: NodeJS.ProcessEnv }): Promise<Ran> {
  const prelude = 'set -euo pipefail\nset -x\n';
  return new Promise((done) => {
    const o = { ...opts, maxBuffer: 64 << 20, timeout: 240_000 };
    execFile('bash', ['-c', prelude + script], o, (err, stdout, stderr) => {
      done({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}
