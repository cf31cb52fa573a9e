// `svc login` and profiles against a real svcd: at a terminal (a real pseudo-terminal) login shows the
// node's pin and saves nothing until it is confirmed; not at one it needs --pin (checked) or --yes; the
// profile (config.json, mode 0600) serves later calls with no flag or variable; each setting is the flag,
// else its variable, else the profile's, else the default; `svc config` reads and changes profiles; and
// no help text prints a value it read from the environment.
import test, { type ExecutionContext } from 'ava';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testNeeding } from '../support/needs.ts';
import { sharedSvcd } from '../support/start-svcd.ts';
import { BIN, cliJson, runBin } from '../support/svcd.ts';
import { SCRIPT, onTerminal, shellWord } from '../support/terminal.ts';
import { freePort } from '../support/postgres.ts';

const s = sharedSvcd(test, {}, { args: ['core'] });

/** No SVC_ variable of the caller's takes part (an empty value counts as none) and the config dir is `dir`. */
const cleanEnv = (dir: string) => ({
  XDG_CONFIG_HOME: dir, SVC_EDGE: '', SVC_EDGE_PIN: '', SVC_MACHINE_ID: '', SVC_PROFILE: '', SVC_CREDENTIALS: '',
  SVC_MACHINE_TOKEN: '',
});

function configDir(t: ExecutionContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-login-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const profiles = (dir: string) => (JSON.parse(readFileSync(join(dir, 'svc', 'config.json'), 'utf8')) as {
  profiles: Record<string, { edge?: string; pin?: string; machine_id?: string }>;
}).profiles;

testNeeding(test, 'at a terminal, login shows the pin and saves the profile only once it is confirmed', SCRIPT,
  async (t) => {
    const dir = configDir(t);
    const edge = `127.0.0.1:${s.edgePort}`;
    const pin = s.ready.edge_cert_sha256;
    const login = `${process.execPath} ${BIN.svc} login --edge ${edge} --machine-id ${shellWord('tty-agent')}`;
    const env = { ...process.env, ...cleanEnv(dir) };
    const question = 'save it as profile "default"? [y/N] ';
    const no = await onTerminal(login, { env }, [{ question, after: pin, answer: 'n' }]);
    t.is(no.code, 1, no.out);
    t.true(no.out.includes(`pin (SHA-256)  ${pin}`), no.out);
    t.regex(no.out, /Compare it with "edge pin" in svcd's start-up banner/);
    t.regex(no.out, /nothing saved: the certificate was not confirmed/);
    t.false(existsSync(join(dir, 'svc', 'config.json')), 'declined: nothing saved');

    const yes = await onTerminal(login, { env }, [{ question, after: pin, answer: 'y' }]);
    t.is(yes.code, 0, yes.out);
    t.regex(yes.out, /logged in: profile "default" saved in /);
    t.like(profiles(dir).default, { edge, pin, machine_id: 'tty-agent' });
    t.is(statSync(join(dir, 'svc', 'config.json')).mode & 0o777, 0o600);
    t.is(statSync(join(dir, 'svc')).mode & 0o777, 0o700);

    // the same certificate again: nothing to ask (a question here would never be answered)
    const again = await onTerminal(login, { env });
    t.is(again.code, 0, again.out);
    t.false(again.out.includes('[y/N]'));

    // later calls: no flag, no variable
    const hello = await runBin(BIN.svc, ['hello'], cleanEnv(dir));
    t.is(hello.code, 0, hello.stderr);
    t.regex(hello.stdout, /^edge proof: valid/m);
    const quote = await runBin(BIN.svc, ['--json', 'quote-get-pulse', '--bits', '256'], cleanEnv(dir));
    t.is(cliJson(quote).machine_id, 'tty-agent', quote.stderr);
  });

test('not at a terminal, login needs --pin (checked against the node) or --yes; a changed pin warns', async (t) => {
  const dir = configDir(t);
  const env = cleanEnv(dir);
  const edge = `127.0.0.1:${s.edgePort}`;
  const pin = s.ready.edge_cert_sha256;
  const bare = await runBin(BIN.svc, ['login', '--edge', edge], env);
  t.is(bare.code, 2, bare.stderr);
  t.true(bare.stderr.includes(pin), 'the pin is shown, to pass as --pin');
  t.regex(bare.stderr, /this is no terminal: give --pin <sha256> .* or --yes/);
  t.false(existsSync(join(dir, 'svc', 'config.json')));

  const wrong = await runBin(BIN.svc, ['--json', 'login', '--edge', edge, '--pin', 'ab'.repeat(32)], env);
  t.deepEqual([wrong.code, cliJson(wrong).error.code], [3, 'edge_pin_mismatch']);
  t.false(existsSync(join(dir, 'svc', 'config.json')));

  // a pin as openssl prints it (colons, capitals) is the same pin
  const colons = pin.toUpperCase().match(/../g)!.join(':');
  const pinned = await runBin(BIN.svc, ['login', '--edge', edge, '--pin', colons, '--machine-id', 'ci-1'], env);
  t.is(pinned.code, 0, pinned.stderr);
  t.like(profiles(dir).default, { edge, pin, machine_id: 'ci-1' });

  const ci = await runBin(BIN.svc, ['--json', '--profile', 'ci', 'login', '--edge', edge, '--yes'], env);
  t.is(ci.code, 0, ci.stderr);
  t.like(cliJson(ci), { profile: 'ci', edge, pin, machine_id: null });
  t.deepEqual(Object.keys(profiles(dir)).sort(), ['ci', 'default']);

  // the certificate changed since the login (or something is in between): asked again, and warned
  t.is((await runBin(BIN.svc, ['config', 'set', 'pin', '00'.repeat(32)], env)).code, 0);
  const changed = await runBin(BIN.svc, ['login'], env);
  t.is(changed.code, 2, 'no terminal to confirm the new certificate');
  t.regex(changed.stderr, /WARNING: profile "default" pinned another certificate, 0{64}/);
  const accepted = await runBin(BIN.svc, ['login', '--yes'], env);
  t.is(accepted.code, 0, accepted.stderr);
  t.regex(accepted.stderr, /WARNING: profile "default" pinned another certificate/);
  t.is(profiles(dir).default!.pin, pin);
  t.is(profiles(dir).default!.machine_id, 'ci-1', 'a login without --machine-id keeps the saved one');

  const ca = await runBin(BIN.svc, ['login', '--ca', join(s.dataDir, 'edge-cert.pem'), '--yes'], env);
  t.is(ca.code, 2);
  t.regex(ca.stderr, /login saves a pin: leave out --ca and --insecure/);
});

test('flag > environment > profile > default, for the edge, the pin and the machine id', async (t) => {
  const dir = configDir(t);
  const env = cleanEnv(dir);
  const edge = `127.0.0.1:${s.edgePort}`;
  const pin = s.ready.edge_cert_sha256;
  const dead = `127.0.0.1:${await freePort()}`;
  const list = async (args: string[], more: Record<string, string> = {}) => {
    const r = await runBin(BIN.svc, [...args, '--json', 'config', 'list'], { ...env, ...more });
    t.is(r.code, 0, r.stderr);
    return cliJson(r).settings as Record<string, { value?: string; source?: string }>;
  };
  t.like((await list([])).edge, { value: '127.0.0.1:9443', source: 'default' });
  t.like((await list([])).pin, { source: undefined });

  t.is((await runBin(BIN.svc, ['login', '--edge', edge, '--machine-id', 'prof-m', '--yes'], env)).code, 0);
  t.deepEqual(Object.values(await list([])).map((x) => x.source), ['profile', 'profile', 'profile']);

  // the edge
  const envEdge = await runBin(BIN.svc, ['hello'], { ...env, SVC_EDGE: dead });
  t.is(envEdge.code, 3, 'SVC_EDGE beats the profile');
  t.like((await list([], { SVC_EDGE: dead })).edge, { value: dead, source: 'env' });
  t.is((await runBin(BIN.svc, ['--edge', edge, 'hello'], { ...env, SVC_EDGE: dead })).code, 0, '--edge beats both');
  // the pin
  const envPin = await runBin(BIN.svc, ['--json', 'hello'], { ...env, SVC_EDGE_PIN: 'ab'.repeat(32) });
  t.deepEqual([envPin.code, cliJson(envPin).error.code], [3, 'edge_pin_mismatch'], 'SVC_EDGE_PIN beats the profile');
  const flagPin = await runBin(BIN.svc, ['--pin', pin, 'hello'], { ...env, SVC_EDGE_PIN: 'ab'.repeat(32) });
  t.is(flagPin.code, 0, '--pin beats SVC_EDGE_PIN');
  // the machine id
  const machine = async (args: string[], more: Record<string, string> = {}) =>
    (await runBin(BIN.svc, [...args, 'config', 'get', 'machine-id'], { ...env, ...more })).stdout.trim();
  t.is(await machine([]), 'prof-m');
  t.is(await machine([], { SVC_MACHINE_ID: 'env-m' }), 'env-m');
  t.is(await machine(['--machine-id', 'flag-m'], { SVC_MACHINE_ID: 'env-m' }), 'flag-m');
  t.like((await list(['--machine-id', 'flag-m']))['machine-id'], { value: 'flag-m', source: 'flag' });

  // trust is one choice: --ca on the command line sets a saved pin aside
  t.is((await runBin(BIN.svc, ['config', 'set', 'pin', 'cd'.repeat(32)], env)).code, 0);
  const viaCa = await runBin(BIN.svc, ['--edge', `localhost:${s.edgePort}`, '--ca', join(s.dataDir, 'edge-cert.pem'),
    'hello'], env);
  t.is(viaCa.code, 0, viaCa.stderr);

  // another profile, by flag or variable; one that does not exist is a usage error
  const other = await runBin(BIN.svc, ['--profile', 'down', 'config', 'set', 'edge', dead], env);
  t.is(other.code, 0, other.stderr);
  t.is((await runBin(BIN.svc, ['hello'], { ...env, SVC_PROFILE: 'down' })).code, 3);
  t.like((await list(['--profile', 'down'])).edge, { value: dead, source: 'profile' });
  const missing = await runBin(BIN.svc, ['--profile', 'nope', 'hello'], env);
  t.is(missing.code, 2);
  t.regex(missing.stderr, /no profile "nope" in .*config\.json: save one with svc login --profile nope/);
});

test('svc config: get names a missing value, set checks what it saves, unset removes it', async (t) => {
  const dir = configDir(t);
  const env = cleanEnv(dir);
  const unset = await runBin(BIN.svc, ['--json', 'config', 'get', 'pin'], env);
  t.deepEqual([unset.code, cliJson(unset).error.code], [1, 'not_set']);
  t.is((await runBin(BIN.svc, ['config', 'set', 'pin', 'not-a-pin'], env)).code, 2);
  t.is((await runBin(BIN.svc, ['config', 'set', 'edge', 'a:b:c'], env)).code, 2);
  t.is((await runBin(BIN.svc, ['config', 'set', 'colour', 'blue'], env)).code, 2, 'only edge, pin, machine-id');
  const set = await runBin(BIN.svc, ['config', 'set', 'pin', 'AB:'.repeat(31) + 'AB'], env);
  t.is(set.code, 0, set.stderr);
  t.is((await runBin(BIN.svc, ['config', 'get', 'pin'], env)).stdout.trim(), 'ab'.repeat(32), 'saved normalised');
  t.is(statSync(join(dir, 'svc', 'config.json')).mode & 0o777, 0o600);
  const human = await runBin(BIN.svc, ['config', 'list'], env);
  t.regex(human.stdout, /^pin {9}(ab){32} {2}\(profile "default"\)$/m);
  t.regex(human.stdout, /^edge {8}127\.0\.0\.1:9443 {2}\(default\)$/m);
  t.regex(human.stdout, /^machine-id {2}\(not set\)$/m);
  t.is((await runBin(BIN.svc, ['config', 'unset', 'pin'], env)).code, 0);
  t.is((await runBin(BIN.svc, ['config', 'get', 'pin'], env)).code, 1);
});

const SENTINELS: Record<string, string> = {
  SVC_EDGE: 'edge.sentinel.example:1234', SVC_EDGE_PIN: 'f00dfeed'.repeat(8), SVC_MACHINE_ID: 'sentinel-machine',
  SVC_PROFILE: 'sentinelprofile', SVC_CREDENTIALS: '/sentinel/credentials.json', SVC_MACHINE_TOKEN: 'sentinel-token',
  SVC_DATA_DIR: '/sentinel/data',
};

/** Every help text of a commander tree, printed by a child process with `env`. */
function allHelp(module: string, build: string, env: Record<string, string>): Promise<string> {
  const code = `const m = await import(${JSON.stringify(fileURLToPath(new URL(module, import.meta.url)))});
const root = ${build};
const walk = (c) => [c, ...c.commands.flatMap(walk)];
let out = '';
for (const c of walk(root)) { c.configureOutput({ writeOut: (x) => { out += x; } }); c.outputHelp(); }
process.stdout.write(out);`;
  return new Promise((resolve, reject) => {
    const opts = { env: { ...process.env, ...env }, maxBuffer: 16 << 20 };
    execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], opts,
      (e, out, err) => (e ? reject(new Error(err)) : resolve(out)));
  });
}

test('--help never prints a value it read from the environment: it names the variable', async (t) => {
  const svc = await allHelp('../../src/cli/svc.ts', 'm.buildProgram(async () => {})', SENTINELS);
  const admin = await allHelp('../../src/cli/svc-admin.ts', 'm.buildAdminProgram({ json: false })', SENTINELS);
  t.true(svc.length > 10_000 && admin.length > 2_000, 'every command\'s help was printed');
  for (const [name, value] of Object.entries(SENTINELS)) {
    t.false(svc.includes(value), `svc help shows ${name}'s value`);
    t.false(admin.includes(value), `svc-admin help shows ${name}'s value`);
  }
  for (const v of ['SVC_EDGE', 'SVC_EDGE_PIN', 'SVC_MACHINE_ID', 'SVC_PROFILE', 'SVC_CREDENTIALS']) {
    t.true(svc.includes(`env: ${v})`), v);
  }
  t.true(admin.includes('env: SVC_DATA_DIR)'));
  // and the binary itself, as a person runs it
  const root = await runBin(BIN.svc, ['--help'], SENTINELS);
  t.is(root.code, 0);
  for (const value of Object.values(SENTINELS)) t.false(root.stdout.includes(value), value);
  t.regex(root.stdout, /--pin <sha256> .*\(env: SVC_EDGE_PIN\)/);
});
