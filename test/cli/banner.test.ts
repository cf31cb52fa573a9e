// svcd's ready message: on a terminal (a real pseudo-terminal, util-linux `script`) a banner of what listens,
// the edge pin, each rail's state and the data dir, and Ctrl-C there stops svcd cleanly; piped (a service
// manager, a log collector), the one JSON "svcd ready" line and no banner.
import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/core/config.ts';
import { banner, redactedUrl, type ReadyFacts } from '../../src/core/ready-banner.ts';
import { testNeeding } from '../support/needs.ts';
import { SCRIPT } from '../support/terminal.ts';
import { BIN } from '../support/svcd.ts';

const FACTS: ReadyFacts = {
  version: '1.0.5', nodeId: 'svc-node-1', http: 'http://127.0.0.1:8080', edge: '127.0.0.1:9443',
  backend: '127.0.0.1:9444', adminSocket: '/d/admin.sock', metrics: null, gatewayProcesses: 2,
  edgeCertSha256: 'ab'.repeat(32), selfSigned: true,
};

/** svcd start on a fresh data dir, its stdout a terminal (`tty`) or a pipe; Ctrl-C (or SIGINT) once ready. */
async function runSvcd(tty: boolean): Promise<{ out: string; code: number | null; ready: Record<string, unknown> }> {
  const dir = mkdtempSync(join(tmpdir(), 'svcd-banner-'));
  try {
    const env = {
      ...process.env, SVC_DATA_DIR: join(dir, 'data'), SVC_EDGE_PORT: '0', SVC_BACKEND_PORT: '0', SVC_HTTP_PORT: '0',
      SVC_READY_FILE: join(dir, 'ready.json'), SVC_PAYMENTS: 'local', SVC_GATEWAY_PROCESSES: '0', SVC_LOG_LEVEL: 'info',
      SVC_KERNEL_THREADS: '1',
    };
    // `exec`: svcd itself is the terminal's foreground process, not a child of the shell `script` starts
    // (dash, /bin/sh where SHELL is unset, dies of the Ctrl-C itself and `script` reports 130)
    const p = tty
      ? spawn('script', ['-qfec', `exec ${process.execPath} ${BIN.svcd} start`, '/dev/null'], { env, stdio: 'pipe' })
      : spawn(process.execPath, [BIN.svcd, 'start'], { env, stdio: 'pipe' });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { out += d; });
    const exited = new Promise<number | null>((r) => p.on('exit', r));
    const deadline = Date.now() + 120_000;
    while (!existsSync(env.SVC_READY_FILE) || !/svcd ready|Ctrl-C stops/.test(out)) {
      if (p.exitCode !== null || Date.now() > deadline) throw new Error(`svcd did not start: ${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const ready = JSON.parse(readFileSync(env.SVC_READY_FILE, 'utf8')) as Record<string, unknown>;
    // on the terminal, the keystroke: its line discipline sends SIGINT to svcd, as a person's Ctrl-C does
    if (tty) p.stdin.write('\x03');
    else p.kill('SIGINT');
    const code = await exited;
    return { out, code, ready };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

testNeeding(test, 'on a terminal: the banner, then JSON logs; Ctrl-C stops svcd cleanly', SCRIPT, async (t) => {
  const { out, code, ready } = await runSvcd(true);
  t.is(code, 0, out);
  t.regex(out, /svcd \d+\.\d+\.\d+ ready, node svc-node-[0-9a-f]+/);
  t.true(out.includes(`HTTP          ${ready.http as string}`), out);
  t.true(out.includes(`edge pin      ${ready.edge_cert_sha256 as string} (self-signed`));
  t.true(out.includes(`admin socket  ${ready.admin_socket as string}`));
  t.true(out.includes(`data dir      ${ready.data_dir as string}`));
  t.regex(out, /USDC on Base +local: invoices open, settled by hand/);
  t.false(out.includes('"msg":"svcd ready"'), 'the banner stands for the JSON ready line');
  t.regex(out, /"msg":"svcd stopped"/, 'then the logs, as JSON lines');
});

testNeeding(test, 'piped: the JSON ready line, no banner', SCRIPT, async (t) => {
  const { out, code, ready } = await runSvcd(false);
  t.is(code, 0, out);
  const line = out.split('\n').find((l) => l.includes('"msg":"svcd ready"'));
  t.truthy(line, out);
  t.like(JSON.parse(line!), { http: ready.http, edge_cert_sha256: ready.edge_cert_sha256 });
  t.false(out.includes('Ctrl-C stops'));
});

test('the banner: live, watched, by-hand and placeholder rails; the database URL without its password', (t) => {
  const config = loadConfig({
    SVC_DATA_DIR: '/d', SVC_STORE: 'postgres://svc:s3cret@db.internal:5432/svc',
    SVC_WALLET_USDC_BASE: '0x000000000000000000000000000000000000bEEF',
    SVC_WATCH_USDC_BASE_RPC: 'https://rpc.example/key',
    SVC_WATCH_USDC_BASE_TOKEN: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    SVC_WALLET_USDT_TRON: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7',
  });
  const text = banner(config, FACTS);
  t.regex(text, /USDC on Base +live: 0x0+beef, a watcher credits payments/i);
  t.regex(text, /USDT on TRON +live: TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7, settled by hand \(no SVC_WATCH_ RPC\)/);
  t.regex(text, /USDC on Solana +placeholder: no receiving address \(SVC_WALLET_USDC_SOLANA\)/);
  t.regex(text, /ledger +PostgreSQL postgres:\/\/svc:\*\*\*@db\.internal:5432\/svc/);
  t.false(text.includes('s3cret'));
  t.regex(text, /HTTP +http:\/\/127\.0\.0\.1:8080 \(2 gateway processes\)/);
  t.is(redactedUrl('postgres://db/svc'), 'postgres://db/svc');
  t.is(redactedUrl('not a url'), 'postgres://…');
});
