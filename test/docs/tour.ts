// What the README tour tests share: the ```sh blocks of a README section, a child process run to its
// end, and a copy of the working tree (git-initialised) for a tour to run in, as a user's clone.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The ```sh blocks under `heading` ("## Try it with the CLI", "### Funding …"): up to the next `## ` or
 * `### ` heading, so a sub-section's blocks are not its parent's.
 */
export function shBlocks(markdown: string, heading: string): string[] {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`README has no section "${heading}"`);
  const rest = markdown.slice(start + heading.length + 2);
  const next = rest.search(/\n#{2,3} /);
  const section = next < 0 ? rest : rest.slice(0, next);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

export function run(cmd: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; input?: string }) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    const p = execFile(cmd, args, { ...opts, maxBuffer: 64 << 20, timeout: 240_000 }, (err, stdout, stderr) => {
      done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    if (opts.input !== undefined) p.stdin!.end(opts.input);
  });
}

/** The files git would check out: tracked ones and new ones not ignored (this working tree's state). */
export async function copyWorkingTree(to: string): Promise<void> {
  const ls = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT });
  for (const f of ls.stdout.split('\0').filter(Boolean)) {
    if (!existsSync(join(ROOT, f))) continue; // deleted in the working tree
    mkdirSync(dirname(join(to, f)), { recursive: true });
    cpSync(join(ROOT, f), join(to, f));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(to, 'node_modules'));
  const git = (...a: string[]) => run('git', ['-c', 'user.name=tour', '-c', 'user.email=tour@localhost', ...a], {
    cwd: to,
  });
  await git('init', '-q');
  await git('add', '-A');
  await git('commit', '-qm', 'the working tree under test');
}

/**
 * The environment a tour runs in: this process's, HOME elsewhere (so svc's profiles and tokens go to its
 * ~/.config/svc), no XDG_CONFIG_HOME and no SVC_* variable of the caller's.
 */
export function tourEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
  delete env.XDG_CONFIG_HOME;
  for (const k of Object.keys(env)) if (k.startsWith('SVC_')) delete env[k];
  return env;
}
