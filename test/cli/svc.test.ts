// The CLIs as users run them: help lists every command and flag, exit codes are 0 ok, 1 the
// service said no, 2 usage, 3 connection/TLS failure, and --insecure says loudly what it does.
import test from 'ava';
import { BIN, cliJson, runBin } from '../support/svcd.ts';
import { COMMANDS } from '../../src/protocol/registry.ts';
import { sharedSvcd } from '../support/start-svcd.ts';

const s = sharedSvcd(test, {}, { args: ['core'] });

test('svc --help lists every public command form; per-command help lists its flags', async (t) => {
  const r = await runBin(BIN.svc, ['--help']);
  t.is(r.code, 0);
  for (const c of COMMANDS) for (const name of c.cli) t.regex(r.stdout, new RegExp(`^  ${name} `, 'm'), name);
  for (const flag of ['--edge', '--json', '--pin', '--ca', '--insecure', '--machine-id', '--credentials']) {
    t.true(r.stdout.includes(flag), flag);
  }
  t.regex(r.stdout, /Exit codes: 0 ok, 1 the service said no/);
  const q = await runBin(BIN.svc, ['quote-make-bct', '--help']);
  const quoteFlags = [
    '--bits', '--bytes', '--max-output', '--priority', '--ttl-ms', '--idempotency-key', '--plain-hex', '--plain-file',
  ];
  for (const flag of quoteFlags) t.true(q.stdout.includes(flag), flag);
  const f = await runBin(BIN.svc, ['fund-account', '--help']);
  t.regex(f.stdout, /--network <network>.*choices: "TRON", "Solana", "Base"/s);
  const a = await runBin(BIN.admin, ['--help']);
  for (const c of ['settle-invoice', 'recover-runtime', 'rotate-token']) t.true(a.stdout.includes(c), c);
  t.is((await runBin(BIN.svc, ['--version'])).stdout.trim(), 'v1.0.5');
});

test('exit codes: 0 ok, 1 refused, 2 usage, 3 connection or TLS failure', async (t) => {
  t.is((await s.svc(['hello'])).code, 0);
  const refused = await s.svc(['--machine-id', 'nobody', 'balance']);
  t.deepEqual([refused.code, /^error: unauthorized: /.test(refused.stderr)], [1, true]);
  t.is((await s.svc(['frobnicate'])).code, 2);
  t.is((await s.svc(['quote-get-pulse'])).code, 2, 'missing --machine-id');
  t.is((await s.svc(['--machine-id', 'm', 'quote-get-pulse', '--bits', 'many'])).code, 2);
  t.is((await runBin(BIN.svc, ['--edge', '127.0.0.1:1', 'hello'])).code, 3);
  const pin = await runBin(BIN.svc, ['--edge', `127.0.0.1:${s.edgePort}`, '--pin', '00'.repeat(32), 'hello']);
  t.deepEqual([pin.code, /does not match the pin/.test(pin.stderr)], [3, true]);
  const ca = await runBin(BIN.svc, ['--edge', `127.0.0.1:${s.edgePort}`, 'hello']);
  t.is(ca.code, 3, 'a self-signed edge is refused without --pin, --ca or --insecure');
  const insecure = await runBin(BIN.svc, ['--edge', `127.0.0.1:${s.edgePort}`, '--insecure', 'hello']);
  t.is(insecure.code, 0);
  t.regex(insecure.stderr, /WARNING: --insecure/);
  const viaCa = await runBin(BIN.svc, [
    '--edge', `localhost:${s.edgePort}`, '--ca', `${s.dataDir}/edge-cert.pem`, 'hello',
  ]);
  t.is(viaCa.code, 0, viaCa.stderr);
  t.is((await runBin(BIN.admin, ['--data-dir', '/nonexistent', 'recover-runtime'])).code, 3);
});

test('CLI flags follow the request schemas: --bytes alone quotes make-bct, required inputs are required', async (t) => {
  const m = ['--machine-id', 'cli-shapes', '--json'];
  const byBytes = await s.svc([...m, 'quote-make-bct', '--bytes', '5']);
  t.is(byBytes.code, 0, byBytes.stderr);
  t.is(cliJson(byBytes).bytes, 5);
  t.is((await s.svc([...m, 'quote-make-bct', '--plain-hex', '68656c6c6f'])).code, 0);
  const neither = await s.svc([...m, 'quote-make-bct']);
  t.deepEqual([neither.code, /needs --plain-hex \(or its file\) or --bytes/.test(neither.stderr)], [2, true]);
  const noBytes = await s.svc([...m, 'quote-attest-event']);
  t.deepEqual([noBytes.code, /--bytes <n>' not specified/.test(noBytes.stderr)], [2, true]);
  t.is((await s.svc([...m, 'quote-get-pulse', '--bytes', '5'])).code, 2, 'get-pulse reads no input: no --bytes');
  const stray = await s.svc([...m, 'quote-make-bct', '--bytes', '5', '--packet-hex', '00']);
  t.is(stray.code, 2, 'no --packet-hex on make-bct');
  const ts = await s.svc([...m, 'quote-timestamp-proof']);
  t.is(cliJson(ts).bytes, 32, 'a fixed-size input defaults to its size');
  const sealed = await s.svc([...m, 'sealed-message', 'q_x', '--plain-hex', '00']);
  t.deepEqual([sealed.code, /needs --packet-hex or its file/.test(sealed.stderr)], [2, true]);
  const help = await runBin(BIN.svc, ['quote-make-bct', '--help']);
  t.regex(help.stdout, /or --bytes alone, and the execution must send exactly that many bytes/);
  const sealedHelp = await runBin(BIN.svc, ['sealed-message', '--help']);
  t.regex(sealedHelp.stdout, /--packet-hex <hex> +recipient X25519 public key/);
  const bvmHelp = await runBin(BIN.svc, ['bvm-exec', '--help']);
  t.regex(bvmHelp.stdout, /--packet-hex <hex> +the program's input \(optional\)/);
});

test('a missing required option of a subcommand is a usage error (exit 2) in both CLIs', async (t) => {
  t.is((await s.svc(['--machine-id', 'm', 'fund-account', '--units', '1'])).code, 2);
  t.is((await s.svcAdmin(['settle-invoice', 'inv_x'])).code, 2);
  t.is((await s.svcAdmin(['credit-late-payment', 'inv_x'])).code, 2);
});
