// A command on a pseudo-terminal (util-linux `script`), as a person runs it at a terminal: stdin, stdout and
// stderr are the terminal, so a CLI that asks does ask. Each time the terminal shows a question the test
// knows, after what it must have shown first, the answer is typed: no sleeps, nothing that depends on
// how fast the machine is. Resolves with the exit code and everything the terminal showed.
import { spawn, spawnSync } from 'node:child_process';
import type { Need } from './needs.ts';

export const SCRIPT: Need = {
  what: 'script (util-linux)', present: spawnSync('script', ['--version']).status === 0,
  hint: 'apt-get install util-linux',
};

export interface Answer { question: string; after?: string; answer: string }

/** Quotes one argument for the shell `script -c` runs. */
export const shellWord = (a: string) => `'${a.replaceAll('\'', '\'\\\'\'')}'`;

/** What a terminal shows as text: lines end with CRLF there, and cursor moves are escape sequences. */
const plain = (s: string) => s.replaceAll('\r', '').replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');

export function onTerminal(
  command: string, opts: { cwd?: string; env: NodeJS.ProcessEnv }, answers: Answer[] = [],
): Promise<{ code: number; out: string }> {
  return new Promise((done) => {
    // `exec`: the command replaces the shell `script` starts (whichever SHELL names), so its exit code is the
    // command's own, and a signal from the terminal reaches the command alone
    const p = spawn('script', ['-qfec', `exec ${command}`, '/dev/null'], { ...opts, stdio: 'pipe' });
    let out = '';
    const left = [...answers];
    // only a hang ends here: a question never shown, or never answered
    const killer = setTimeout(() => p.kill('SIGKILL'), 240_000);
    const read = (d: Buffer) => {
      out += d;
      const next = left[0];
      const shown = plain(out);
      if (next && shown.endsWith(next.question) && shown.includes(next.after ?? '')) {
        left.shift();
        p.stdin.write(`${next.answer}\n`);
      }
    };
    p.stdout.on('data', read);
    p.stderr.on('data', read);
    p.on('error', (e) => { clearTimeout(killer); done({ code: 127, out: `${out}${e.message}` }); });
    p.on('close', (code) => {
      clearTimeout(killer);
      done({ code: code ?? 1, out: plain(out) });
    });
  });
}
