// The CLI conventions (as gh, stripe and git keep them), against the real binaries and
// a real svcd: --help (with examples) on every command of svc, svc-admin and svcd; usage errors exit
// 2 with the usage line; under --json every failure is one JSON object on stderr; certificate
// failures name the fix; hello verifies the edge proof, pulse verifies pulses; svc-admin
// list-invoices filters and pages; settling twice with another reference is refused; completion.
import test, { type ExecutionContext } from 'ava';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { testNeeding } from '../support/needs.ts';
import { BIN, Svcd, cliJson, runBin } from '../support/svcd.ts';
import { buildProgram } from '../../src/cli/svc.ts';
import { buildAdminProgram } from '../../src/cli/svc-admin.ts';
import { SVCD_COMMANDS } from '../../src/cli/svcd-usage.ts';
import { verifyEdgeProof } from '../../src/client/node-proofs.ts';
import { verifyPublishedPulse } from '../../src/client/verify.ts';
import type { SignedPulse } from '../../src/protocol/pulse-format.ts';
import { COMMANDS } from '../../src/protocol/registry.ts';
import { until } from '../support/until.ts';
import { sharedSvcd } from '../support/start-svcd.ts';
import { txRef } from '../support/references.ts';
import { freePort } from '../support/postgres.ts';

// short pulse periods, so a pulse with a predecessor exists soon
const s = sharedSvcd(test, { SVC_PULSE_PERIOD_MS: '300' }, { args: ['core'] });

type Out = { code: number; stdout: string; stderr: string };

/** Exactly one JSON object on stderr, nothing on stdout: what --json promises for a failure. */
function oneJsonError(t: ExecutionContext, r: Out): { code: string; message: string; [k: string]: unknown } {
  t.is(r.stdout, '', 'nothing on stdout');
  const lines = r.stderr.trim().split('\n');
  t.is(lines.length, 1, r.stderr);
  const v = JSON.parse(lines[0]!) as { ok: boolean; error: { code: string; message: string } };
  t.is(v.ok, false);
  t.is(typeof v.error.code, 'string');
  t.is(typeof v.error.message, 'string');
  return v.error;
}

function helpOf(c: ReturnType<typeof buildProgram>): string {
  let out = '';
  c.configureOutput({ writeOut: (x) => { out += x; }, writeErr: (x) => { out += x; } });
  c.outputHelp();
  return out;
}

test('--help exits 0 on svc, a quote command, svcd and svc-admin', async (t) => {
  for (const [bin, args, want] of [
    [BIN.svc, ['--help'], /^Usage: svc \[options\] \[command\]/],
    [BIN.svc, ['quote-get-pulse', '--help'], /^Usage: svc quote-get-pulse \[options\]/],
    [BIN.svc, ['help', 'balance'], /^Usage: svc balance/],
    [BIN.svcd, ['--help'],
      /^Usage: svcd \[start\|core\|gateway\|manifest\|selfcheck\|restore\|audit\|migrate\|cluster-cert\]/],
    [BIN.svcd, ['core', '--help'], /^Usage: svcd/],
    [BIN.admin, ['--help'], /^Usage: svc-admin \[options\] \[command\]/],
    [BIN.admin, ['list-invoices', '--help'], /^Usage: svc-admin list-invoices \[options\]/],
  ] as const) {
    const r = await runBin(bin, [...args]);
    t.is(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    t.regex(r.stdout, want, args.join(' '));
  }
});

test('svcd --help lists its subcommands and points to the configuration table; --version', async (t) => {
  const r = await runBin(BIN.svcd, ['--help']);
  for (const c of Object.keys(SVCD_COMMANDS)) t.regex(r.stdout, new RegExp(`^  ${c} `, 'm'), c);
  t.regex(r.stdout, /README\.md, section "Configuration"/);
  t.regex(r.stdout, /Examples:/);
  const v = await runBin(BIN.svcd, ['--version']);
  t.deepEqual([v.code, /^svcd \d+\.\d+\.\d+ /.test(v.stdout)], [0, true]);
});

test('every command of svc and svc-admin shows examples in its help', (t) => {
  const svc = buildProgram(async () => {});
  const names = svc.commands.map((c) => c.name());
  const extra = ['pulse', 'completion', 'verify-pulse', 'verify-log', 'login', 'config', 'run'];
  for (const n of [...COMMANDS.flatMap((c) => c.cli), ...extra]) t.true(names.includes(n), n);
  // every command, `svc run <service>` and `svc config <verb>` too
  type Cmd = ReturnType<typeof buildProgram>;
  const all = (c: Cmd): Cmd[] => [c, ...c.commands.flatMap(all)];
  for (const c of all(svc)) t.regex(helpOf(c), /\nExamples:\n {2}\$ (svc|eval|source|export) /, c.name());
  const admin = buildAdminProgram({ json: false });
  for (const c of [admin, ...admin.commands]) t.regex(helpOf(c), /\nExamples:\n {2}\$ svc-admin /, c.name());
  // examples come from the registry's schemas: a required option appears in its command's example
  t.regex(helpOf(admin.commands.find((c) => c.name() === 'settle-invoice')!), /settle-invoice inv_… --reference /);
  t.regex(helpOf(svc.commands.find((c) => c.name() === 'quote-attest-event')!), /quote-attest-event --bytes \d+/);
});

test('usage errors exit 2 with the usage line: unknown flag, unknown command, missing or bad argument', async (t) => {
  const bogus = await runBin(BIN.svc, ['balance', '--bogus']);
  t.is(bogus.code, 2);
  t.regex(bogus.stderr, /unknown option '--bogus'/);
  t.regex(bogus.stderr, /^Usage: svc balance \[options\]$/m);
  const cases: [string, string[], RegExp][] = [
    [BIN.svc, ['frobnicate'], /^Usage: svc \[options\] \[command\]$/m],
    [BIN.svc, ['accept-quote'], /^Usage: svc accept-quote \[options\] <quote_id>$/m],
    [BIN.svc, ['--machine-id', 'm', 'quote-get-pulse', '--bits', 'many'], /^Usage: svc quote-get-pulse/m],
    [BIN.svc, ['pulse', 'x'], /^Usage: svc pulse \[options\] \[index\]$/m],
    [BIN.svc, ['completion', 'fish'], /^Usage: svc completion \[options\] <shell>$/m],
    [BIN.svc, ['balance'], /--machine-id \(or SVC_MACHINE_ID\) is required[^]*^Usage: svc balance/m],
    [BIN.admin, ['list-invoices', '--state', 'paid'], /^Usage: svc-admin list-invoices \[options\]$/m],
    [BIN.admin, ['list-invoices', '--limit', '-1'], /^Usage: svc-admin list-invoices/m],
    [BIN.admin, ['settle-invoice', 'inv_x'], /--reference <reference>' not specified/],
    [BIN.svcd, ['bogus'], /^Usage: svcd /m],
    [BIN.svcd, ['--bogus'], /unknown option --bogus/],
  ];
  for (const [bin, args, want] of cases) {
    const r = await runBin(bin, args, { SVC_MACHINE_ID: '' });
    t.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    t.regex(r.stderr, want, args.join(' '));
  }
});

test('--json: a usage error, a refusal and a connection failure are each one JSON object on stderr', async (t) => {
  const usage = oneJsonError(t, await runBin(BIN.svc, ['--json', 'balance', '--bogus']));
  t.deepEqual([usage.code, usage.source, usage.usage], ['usage', 'cli', 'Usage: svc balance [options]']);
  const late = await runBin(BIN.svc, ['balance', '--bogus', '--json']);
  t.is(late.code, 2);
  t.is(oneJsonError(t, late).code, 'usage', '--json after the subcommand counts too');
  const bare = await runBin(BIN.svc, ['--json']);
  t.deepEqual([bare.code, oneJsonError(t, bare).message], [2, 'a command is required']);
  t.is(oneJsonError(t, await runBin(BIN.admin, ['--json', 'frobnicate'])).code, 'usage');

  const port = await freePort();
  const down = await runBin(BIN.svc, ['--json', '--edge', `127.0.0.1:${port}`, '--machine-id', 'm', 'balance']);
  t.is(down.code, 3);
  const e = oneJsonError(t, down);
  t.deepEqual([e.code, e.source], ['connection_failed', 'cli']);
  t.regex(String(e.hint), /--edge|SVC_EDGE/);

  const refused = await s.svc(['--json', '--machine-id', 'nobody-json', 'balance']);
  t.is(refused.code, 1);
  t.deepEqual([oneJsonError(t, refused).code, oneJsonError(t, refused).source], ['unauthorized', 'svc']);
  const noAdmin = await runBin(BIN.admin, ['--json', '--data-dir', '/nonexistent', 'recover-runtime']);
  t.is(noAdmin.code, 3);
  t.regex(String(oneJsonError(t, noAdmin).hint), /--data-dir|SVC_DATA_DIR/);
});

test('a self-signed edge or a wrong pin: the error names --pin, SVC_EDGE_PIN and where to read the pin', async (t) => {
  const edge = `127.0.0.1:${s.edgePort}`;
  const plain = await runBin(BIN.svc, ['--edge', edge, 'hello'], { SVC_EDGE_PIN: '' });
  t.is(plain.code, 3);
  t.regex(plain.stderr, /self-signed certificate/);
  for (const want of [/--pin <sha256>/, /SVC_EDGE_PIN/, /edge_cert_sha256/, /svc_public_manifest\.json/]) {
    t.regex(plain.stderr, want);
  }
  const json = oneJsonError(t, await runBin(BIN.svc, ['--json', '--edge', edge, 'hello'], { SVC_EDGE_PIN: '' }));
  t.is(json.code, 'edge_certificate_untrusted');
  t.regex(String(json.hint), /SVC_EDGE_PIN/);
  const wrong = await runBin(BIN.svc, ['--json', '--edge', edge, 'hello'], { SVC_EDGE_PIN: 'ab'.repeat(32) });
  const w = oneJsonError(t, wrong);
  t.deepEqual([wrong.code, w.code], [3, 'edge_pin_mismatch']);
  t.regex(String(w.hint), /edge_cert_sha256/);
  // the pin read from the environment works like --pin
  const viaEnv = await runBin(BIN.svc, ['--edge', edge, 'hello'], { SVC_EDGE_PIN: s.ready.edge_cert_sha256 });
  t.is(viaEnv.code, 0, viaEnv.stderr);
});

test('svc hello verifies the edge proof and says so; a proof that does not verify is an error exit', async (t) => {
  const r = await s.svc(['hello']);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /^edge proof: valid \(key [0-9a-f]{16}, [\w-]{43}\)$/m);
  const j = await s.svc(['--json', 'hello', '--nonce', 'my-nonce-123']);
  const hello = cliJson(j);
  t.is(hello.edge_proof.statement.nonce, 'my-nonce-123');
  t.true(hello.edge_proof_check.valid);
  t.true(hello.edge_proof_check.checks.includes('edge_cert_sha256 is the certificate this connection saw'));
  const pinned = await s.svc(['hello', '--node-key', hello.edge_proof.public_key]);
  t.is(pinned.code, 0, 'the node key from elsewhere (the manifest) matches');
  const other = await s.svc(['hello', '--node-key', Buffer.alloc(32, 7).toString('base64url')]);
  t.is(other.code, 1);
  t.regex(other.stderr, /edge proof INVALID: public key is the trusted node key/);
  const otherJson = oneJsonError(t, await s.svc(['--json', 'hello', '--node-key', 'AAAA']));
  t.is(otherJson.code, 'verification_failed');

  // what each check catches, on a real reply: a replayed proof, a changed statement, another certificate
  const c = await s.edge();
  const reply = await c.request('HELLO', { nonce: 'fresh-nonce-1' });
  const cert = c.peerCertificateSha256!;
  c.close();
  t.is(cert, s.ready.edge_cert_sha256);
  t.true(verifyEdgeProof(reply, { nonce: 'fresh-nonce-1', certSha256: cert }).ok);
  const failed = (v: ReturnType<typeof verifyEdgeProof>) => v.checks.filter((x) => !x.ok).map((x) => x.name);
  t.deepEqual(failed(verifyEdgeProof(reply, { nonce: 'another-nonce', certSha256: cert })),
    ['nonce is the one this client sent']);
  t.deepEqual(failed(verifyEdgeProof(reply, { nonce: 'fresh-nonce-1', certSha256: '00'.repeat(32) })),
    ['edge_cert_sha256 is the certificate this connection saw']);
  const proof = reply.edge_proof as { statement: Record<string, unknown> };
  const statement = { ...proof.statement, time: '2000-01-01T00:00:00Z' };
  const changed = { ...reply, edge_proof: { ...proof, statement } };
  t.deepEqual(failed(verifyEdgeProof(changed, { nonce: 'fresh-nonce-1' })),
    ['signature: Ed25519 over the RFC 8785 canonical JSON of the statement']);
});

test('svc pulse fetches and verifies a pulse, linked to the one before it', async (t) => {
  const LINK = 'pulse k+1 follows pulse k (index, chain, prev_output)';
  let r = await s.svc(['--json', 'pulse']);
  t.is(r.code, 0, r.stderr);
  if (cliJson(r).pulse.index < 1) {
    r = await until('a pulse with a predecessor', async () => {
      const next = await s.svc(['--json', 'pulse', 'latest']);
      return (next.code !== 0 || cliJson(next).pulse.index >= 1) && next;
    }, { every: 100 });
  }
  t.is(r.code, 0, r.stderr);
  const latest = JSON.parse(r.stdout) as SignedPulse & { public_key: string; verified: boolean; checks: string[] };
  t.true(latest.verified);
  t.true(latest.pulse.index >= 1);
  t.true(latest.checks.includes(LINK), latest.checks.join('; '));
  const text = await s.svc(['pulse', String(latest.pulse.index)]);
  t.is(text.code, 0, text.stderr);
  const verdict = `^pulse ${latest.pulse.index}: valid \\(key [0-9a-f]{16}, linked to pulse \\d+\\)$`;
  t.regex(text.stdout, new RegExp(verdict, 'm'));
  const genesis = await s.svc(['pulse', '0']);
  t.regex(genesis.stdout, /^pulse 0: valid \(key [0-9a-f]{16}\)$/m);
  const missing = await s.svc(['--json', 'pulse', String(Number.MAX_SAFE_INTEGER)]);
  t.deepEqual([missing.code, oneJsonError(t, missing).code], [1, 'not_found']);
  const wrongKey = await s.svc(['pulse', '--node-key', Buffer.alloc(32, 9).toString('base64url')]);
  t.is(wrongKey.code, 1);
  t.regex(wrongKey.stderr, /did NOT verify/);

  // what the checks catch: a changed pulse, and a predecessor from elsewhere in the chain
  const c = await s.edge();
  const p1 = await c.request('PULSE', { index: 1 }) as unknown as SignedPulse & { public_key: string };
  const p0 = await c.request('PULSE', { index: 0 }) as unknown as SignedPulse;
  c.close();
  t.true((await verifyPublishedPulse(p1, p0, p1.public_key)).ok);
  const bad = async (p: SignedPulse, prev?: SignedPulse, key = p1.public_key) =>
    (await verifyPublishedPulse(p, prev, key)).checks.filter((x) => !x.ok).map((x) => x.name);
  t.true((await bad({ ...p1, pulse: { ...p1.pulse, commit: '00'.repeat(32) } }))
    .includes('pulse signature (Ed25519, node key)'));
  t.deepEqual(await bad(p1, { ...p0, output_hash: 'ff'.repeat(32) }), [
    'pulse k output_hash = SHA-256(signed bytes ‖ signature)', LINK,
  ]);
  // the pulse names another node: re-signing needs the node's key, so the signature fails with it
  t.deepEqual(await bad({ ...p1, pulse: { ...p1.pulse, node_id: 'svc-node-0000000000000000' } }), [
    'pulse signature (Ed25519, node key)', 'pulse output_hash = SHA-256(signed bytes ‖ signature)',
    'pulse node_id names a trusted key\'s node (svc-node-<key_id of its first key>)',
  ]);
  t.deepEqual(await bad(p1, p0, Buffer.alloc(32, 9).toString('base64url')), [
    'pulse k signed by a trusted key (key_id ' + p0.pulse.key_id + ')',
    'pulse k+1 signed by a trusted key (key_id ' + p1.pulse.key_id + ')',
  ]);
});

test('svc-admin list-invoices filters by state and machine_id and pages with a cursor', async (t) => {
  const fund = async (m: string) => {
    const r = await s.svc(['--json', '--machine-id', m, 'fund-account', '--units', '1', '--network', 'TRON',
      '--asset', 'USDT']);
    t.is(r.code, 0, r.stderr);
    return cliJson(r).invoice_id as string;
  };
  const a1 = await fund('list-a');
  const a2 = await fund('list-a');
  const a3 = await fund('list-a');
  const b1 = await fund('list-b');
  t.is((await s.svcAdmin(['settle-invoice', a2, '--reference', txRef('list-tx-a2', 'USDT_TRON')])).code, 0);
  const list = async (...args: string[]) => {
    const r = await s.svcAdmin(['--json', 'list-invoices', ...args]);
    t.is(r.code, 0, r.stderr);
    return cliJson(r) as { invoices: { invoice_id: string; state: string }[]; next_cursor: string | null };
  };
  const ids = (l: { invoices: { invoice_id: string }[] }) => l.invoices.map((i) => i.invoice_id).sort();
  t.deepEqual(ids(await list('--machine-id', 'list-a')), [a1, a2, a3].sort());
  t.deepEqual(ids(await list('--machine-id', 'list-a', '--state', 'settled')), [a2]);
  t.deepEqual(ids(await list('--machine-id', 'list-a', '--state', 'pending')), [a1, a3].sort());
  t.deepEqual(ids(await list('--machine-id', 'list-b', '--state', 'settled')), []);
  const settled = await list('--state', 'settled');
  t.true(settled.invoices.every((i) => i.state === 'settled'));
  t.true(ids(settled).includes(a2) && !ids(settled).includes(b1));
  // one at a time: every page holds at most one, and following next_cursor visits each once
  const seen: string[] = [];
  let page = await list('--machine-id', 'list-a', '--limit', '1');
  for (let n = 0; n < 10; n++) {
    t.true(page.invoices.length <= 1);
    seen.push(...ids(page));
    if (page.next_cursor === null) break;
    page = await list('--machine-id', 'list-a', '--limit', '1', '--cursor', page.next_cursor);
  }
  t.deepEqual(seen.sort(), [a1, a2, a3].sort());
  const text = await s.svcAdmin(['list-invoices', '--machine-id', 'list-a', '--state', 'settled']);
  const ref = txRef('list-tx-a2', 'USDT_TRON');
  t.regex(text.stdout, new RegExp(`^${a2}  settled  1 svcC  USDT/TRON  list-a  \\S+  ref ${ref}$`, 'm'));
  t.regex(text.stdout, /^1 invoice\(s\), \d+ read; \(end\)$/m);
  // admin only: the edge refuses it
  const c = await s.edge();
  await t.throwsAsync(c.request('LIST_INVOICES', {}), { message: /admin/ });
  c.close();
});

test('list-invoices: a pending invoice past expires_at is expired, a late credit settled_late', async (t) => {
  const x = await Svcd.start({ SVC_INVOICE_TTL_MS: '1000' });
  t.teardown(async () => { await x.stop(); x.cleanup(); });
  const fund = await x.svc(['--json', '--machine-id', 'ttl-m', 'fund-account', '--units', '1', '--network', 'Base',
    '--asset', 'USDC']);
  const inv = cliJson(fund).invoice_id as string;
  const expired = await until('the invoice is listed as expired', async () => {
    const listed = cliJson(await x.svcAdmin(['--json', 'list-invoices', '--state', 'expired']));
    return listed.invoices.length > 0 && listed;
  }, { every: 100 });
  t.deepEqual(expired.invoices.map((i: { invoice_id: string }) => i.invoice_id), [inv]);
  t.is((await x.svcAdmin(['credit-late-payment', inv, '--reference', txRef('late-1', 'USDC_BASE')])).code, 0);
  const late = cliJson(await x.svcAdmin(['--json', 'list-invoices', '--state', 'settled_late']));
  t.deepEqual(late.invoices.map((i: { invoice_id: string; state: string }) => [i.invoice_id, i.state]),
    [[inv, 'settled']]);
  t.is(cliJson(await x.svcAdmin(['--json', 'list-invoices', '--state', 'expired'])).invoices.length, 0);
});

test('svc-admin settle-invoice: the same reference again is idempotent, another reference is an error', async (t) => {
  const [ONE, TWO] = [txRef('tx-one', 'USDT_TRON'), txRef('tx-two', 'USDT_TRON')];
  const f = await s.svc(['--json', '--machine-id', 'settle-twice', 'fund-account', '--units', '2', '--network', 'TRON',
    '--asset', 'USDT']);
  const inv = cliJson(f).invoice_id as string;
  const first = await s.svcAdmin(['--json', 'settle-invoice', inv, '--reference', ONE]);
  t.is(first.code, 0, first.stderr);
  const again = await s.svcAdmin(['--json', 'settle-invoice', inv, '--reference', ONE]);
  t.is(again.code, 0);
  t.deepEqual(cliJson(again), cliJson(first), 'the same reference returns the same invoice');
  const other = await s.svcAdmin(['settle-invoice', inv, '--reference', TWO]);
  t.is(other.code, 1);
  t.regex(other.stderr, new RegExp(`^error: invoice_already_settled: .*already settled with reference "${ONE}"`));
  const otherJson = oneJsonError(t, await s.svcAdmin(['--json', 'settle-invoice', inv, '--reference', TWO]));
  t.deepEqual([otherJson.code, otherJson.source], ['invoice_already_settled', 'svc']);
  const bal = cliJson(await s.svc(['--json', '--machine-id', 'settle-twice', 'balance'],
    { SVC_MACHINE_TOKEN: cliJson(f).machine_token }));
  t.is(bal.available_units, cliJson(first).credit_units, 'credited once');
});

test('svc completion bash|zsh prints a script naming every command; bash completes from it', async (t) => {
  const names = buildProgram(async () => {}).commands.map((c) => c.name());
  const bash = await runBin(BIN.svc, ['completion', 'bash']);
  t.is(bash.code, 0);
  for (const n of names) t.true(bash.stdout.includes(` ${n}`), n);
  const zsh = await runBin(BIN.svc, ['completion', 'zsh']);
  t.is(zsh.code, 0);
  t.regex(zsh.stdout, /^#compdef svc$/m);
  for (const n of names) t.true(zsh.stdout.includes(`'${n}:`), n);
  // bash: load the script and ask it, as the shell does on <TAB>
  const file = join(s.dataDir, 'svc-completion.bash');
  writeFileSync(file, bash.stdout);
  const complete = (words: string[]) => spawnSync('bash', ['-c',
    `source "$1"; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; `
    + '_svc_completion; printf "%s\\n" "${COMPREPLY[@]}"', 'bash', file], { encoding: 'utf8' })
    .stdout.trim().split('\n');
  t.deepEqual(complete(['svc', 'quote-ma']), ['quote-make-bct', 'quote-machine-event-log']);
  t.deepEqual(complete(['svc', '--edge', 'h:1', 'fund-account', '--netw']), ['--network']);
  t.deepEqual(complete(['svc', 'fund-account', '--network', '']), ['TRON', 'Solana', 'Base']);
  t.deepEqual(complete(['svc', 'completion', 'z']), ['zsh']);
});

const zshPresent = !spawnSync('zsh', ['-c', 'exit 0']).error;
testNeeding(test, 'svc completion zsh: zsh parses the script (zsh -n)',
  { what: 'zsh', present: zshPresent, hint: 'apt-get install zsh (.ci/run does)' }, async (t) => {
  const zsh = await runBin(BIN.svc, ['completion', 'zsh']);
  t.is(zsh.code, 0);
  const parsed = spawnSync('zsh', ['-n'], { input: zsh.stdout });
  t.is(parsed.status, 0, String(parsed.stderr));
});
