// The README's tours run as written: the quick start's service, then every ```sh block of
// "Try it over HTTP" and "Try it with the CLI", pasted into bash in order, on a copy of the working
// tree (git-initialised, so `git status` shows what the tour leaves behind). svcd is started the
// way `npm start` does (package.json's start script, cwd the copy, its embedded defaults) with three
// changes a second service on a shared machine needs: ephemeral ports (the test rewrites the
// README's `localhost:8080` and `127.0.0.1:9443` to them), a ready file, and pulses every second
// (the tour waits for the next pulse). The blocks run under `set -euo pipefail` with curl failing on
// an HTTP error status, so a step that fails, an unset variable or a refused request fails the test.
// The CLI tour runs on a pseudo-terminal (util-linux `script`), where `svc login` shows the node's pin
// and asks: the test answers once the pin shown is svcd's, and the rest of the tour uses that profile.
import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { autoGateways } from '../../src/core/config.ts';
import { join } from 'node:path';
import { until } from '../support/until.ts';
import { onTerminal } from '../support/terminal.ts';
import { copyWorkingTree, ROOT, run, shBlocks, tourEnv } from './tour.ts';

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

test('README: the quick start serves, and the HTTP and CLI tours run as written; git status stays clean', async (t) => {
  t.timeout(300_000);
  const http = shBlocks(README, '## Try it over HTTP');
  const cli = shBlocks(README, '## Try it with the CLI');
  t.true(http.length >= 1 && cli.length >= 1, 'both tours have a sh block');

  const tmp = mkdtempSync(join(tmpdir(), 'svc-tour-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const repo = join(tmp, 'repo');
  const home = join(tmp, 'home');
  mkdirSync(home);
  await copyWorkingTree(repo);

  const start = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { scripts: { start: string } })
    .scripts.start.split(' ');
  const readyFile = join(tmp, 'ready.json');
  const env = tourEnv(home);
  // the quick start's own settings, as its line gives them before `npm start` (SVC_PAYMENTS=local)
  const quick = /^npm install && ((?:[A-Z_]+=\S+ )*)npm start\b/m.exec(README);
  t.truthy(quick, 'the quick start is `npm install && [VAR=value …] npm start`');
  const quickEnv = Object.fromEntries(quick![1]!.trim().split(/\s+/).filter(Boolean).map((a) => a.split('=', 2)));
  const svcdEnv = {
    ...env, ...quickEnv, SVC_HTTP_PORT: '0', SVC_EDGE_PORT: '0', SVC_BACKEND_PORT: '0', SVC_READY_FILE: readyFile,
    SVC_PULSE_PERIOD_MS: '1000',
  };
  const svcd = spawn(start[0]!, start.slice(1), { cwd: repo, env: svcdEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  svcd.stderr.on('data', (d) => { stderr += d; });
  svcd.stdout.resume();
  t.teardown(() => { if (svcd.exitCode === null) svcd.kill('SIGKILL'); });
  await until('svcd ready', () => existsSync(readyFile) || svcd.exitCode !== null, { ms: 90_000 });
  t.is(svcd.exitCode, null, stderr);
  type Ready = { http: string; edge: string; gateway_processes: number; edge_cert_sha256: string };
  const ready = JSON.parse(readFileSync(readyFile, 'utf8')) as Ready;
  // the default topology for this machine's cores (two gateway workers on the 2-core CI box)
  t.is(ready.gateway_processes, autoGateways(availableParallelism()));
  const httpAt = new URL(ready.http).host;
  const edgePort = ready.edge.slice(ready.edge.lastIndexOf(':') + 1);

  const ports = (block: string) => block.replaceAll('localhost:8080', httpAt)
    .replaceAll('127.0.0.1:9443', `127.0.0.1:${edgePort}`);
  // curl fails on an HTTP error status (and prints the body) so a refused request fails the step
  const prelude = 'set -euo pipefail\ncurl() { command curl --fail-with-body "$@"; }\nset -x\n';
  let began = Date.now();
  const r = await run('bash', ['-c', prelude + http.map(ports).join('\n')], { cwd: repo, env });
  t.log(`HTTP tour: ${Date.now() - began} ms`);
  t.is(r.code, 0, `HTTP tour failed:\n${r.stderr.slice(-4000)}\n${r.stdout.slice(-2000)}`);
  // the sandbox execution prints a short answer, not pages of hex
  t.true(r.stdout.length < 20_000, `the HTTP tour printed ${r.stdout.length} characters`);

  // the CLI tour at a terminal, as a person pastes it: `svc login` shows svcd's pin and asks; the answer
  // is typed once the pin it shows is the one svcd published
  const file = join(tmp, 'cli-tour.sh');
  writeFileSync(file, prelude + cli.map(ports).join('\n'));
  began = Date.now();
  const tour = await onTerminal(`bash ${file}`, { cwd: repo, env }, [{
    question: 'save it as profile "default"? [y/N] ', after: `pin (SHA-256)  ${ready.edge_cert_sha256}`, answer: 'y',
  }]);
  t.log(`CLI tour: ${Date.now() - began} ms`);
  t.is(tour.code, 0, `CLI tour failed:\n${tour.out.slice(-6000)}`);
  t.regex(tour.out, /logged in: profile "default" saved in /);
  t.regex(tour.out, /^ {2}ok {3}recomputed output = output_hex$/m, 'verify-pulse prints one check a line');

  const status = await run('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: repo });
  t.is(status.stdout, '', 'the tour leaves nothing git would show');

  svcd.kill('SIGTERM');
  await until('svcd to stop', () => svcd.exitCode !== null, { ms: 30_000 });
  t.is(svcd.exitCode, 0);
  t.is(stderr, '', 'npm start prints nothing on stderr (its log is on stdout)');
});
