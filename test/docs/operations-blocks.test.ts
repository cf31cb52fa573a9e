// docs/operations.md's blocks run as written: key rotation, day-to-day and the restore drill,
// pasted into bash under `set -euo pipefail` in order, against a real svcd whose data dir is `./data` of
// the working directory (a temp dir with the repository's src/, build/, node_modules/ linked in). The
// only rewrites: `/srv/svc/data`, `/srv/svc/restored` and `/srv/backups/` become temp paths, and the
// restored node gets ephemeral ports and one process (its svc then reaches it through SVC_EDGE). The variables
// the doc says to set (INVOICE, TX, LATE_INVOICE, LATE_TX, MACHINE, RECEIPT) come from real flows.
import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fundMachine, paidExecution, Svcd } from '../support/svcd.ts';
import { until } from '../support/until.ts';
import { bash, docBlock, ROOT } from './blocks.ts';
import { txRef } from '../support/references.ts';

const DOC = 'docs/operations.md';

test('docs/operations.md: key rotation, day-to-day and the restore drill run as written', async (t) => {
  t.timeout(300_000);
  const tmp = mkdtempSync(join(tmpdir(), 'svc-ops-doc-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const repo = join(tmp, 'repo');
  mkdirSync(repo);
  for (const f of ['src', 'build', 'node_modules', 'package.json', 'tsconfig.json']) {
    symlinkSync(join(ROOT, f), join(repo, f));
  }
  const data = join(repo, 'data');
  const backups = join(tmp, 'backups'); // as /srv/backups on a host: it exists (backup makes only the last part)
  mkdirSync(backups);
  const restored = join(tmp, 'restored');
  const paths = (body: string) => body.replaceAll('/srv/svc/data', data).replaceAll('/srv/svc/restored', restored)
    .replaceAll('/srv/backups/', `${backups}/`);

  // an invoice that expires unpaid (lifetime 1 s), for credit-late-payment; then svcd on its defaults
  const svcdEnv: Record<string, string> = { SVC_INVOICE_TTL_MS: '1000' };
  const s = new Svcd(svcdEnv, data);
  t.teardown(async () => { await s.stop(); });
  await s.start(['start']);
  let c = await s.edge();
  const rail = { network: 'TRON', asset: 'USDT' };
  const late = await c.request('FUND_ACCOUNT', { machine_id: 'ops-late', units: 5, ...rail });
  c.close();
  const lateExpiry = Date.parse(String(late.expires_at));
  await until('the late invoice to expire', () => Date.now() > lateExpiry + 50, { ms: 60_000 });
  await s.stop();
  delete svcdEnv.SVC_INVOICE_TTL_MS;
  await s.start(['start']);

  const machine = 'ops-doc-machine';
  const token = await fundMachine(s, machine, 20);
  c = await s.edge();
  t.teardown(() => c.close());
  const paid = await paidExecution(c, machine, token, 'get-pulse', { bits: 256 });
  const receipt = String(paid.receipt_id);
  const inv = await c.request('FUND_ACCOUNT', { machine_id: machine, units: 5, ...rail }, { token });

  const env: NodeJS.ProcessEnv = { ...process.env, HOME: tmp };
  for (const k of Object.keys(env)) if (k.startsWith('SVC_')) delete env[k];
  Object.assign(env, {
    INVOICE: String(inv.invoice_id), TX: txRef('tx-ops-doc-1', 'USDT_TRON'), LATE_INVOICE: String(late.invoice_id),
    LATE_TX: txRef('tx-ops-doc-2', 'USDT_TRON'),
    MACHINE: machine, RECEIPT: receipt,
  });
  const runBlock = async (marker: string, extra: NodeJS.ProcessEnv = {}) => {
    const r = await bash(paths(docBlock(DOC, marker).body), { cwd: repo, env: { ...env, ...extra } });
    t.is(r.code, 0, `${marker}:\n${r.stderr.slice(-4000)}\n${r.stdout.slice(-2000)}`);
    return r;
  };

  // Key rotation: rotate, the manifest of that data dir, a backup
  const rotation = await runBlock('node src/bin/svc-admin.mjs --data-dir /srv/svc/data rotate-node-key');
  t.regex(rotation.stdout, /sha256: {3}[0-9a-f]{64}/);
  t.true(existsSync(join(backups, 'svc-after-rotation', 'backup-manifest.json')));

  // Day-to-day: every line, in order (audit exits 1 on a discrepancy, so a clean ledger is asserted too)
  const day = await runBlock('node src/bin/svc-admin.mjs settle-invoice "$INVOICE" --reference "$TX"');
  t.regex(day.stdout, /DNS TXT: {2}_svc-manifest\./);
  t.true(existsSync(join(repo, 'audit-2026-05', 'machines.csv')));
  const listed = async (state: string) => (await s.svcAdmin(['--json', 'list-invoices', '--state', state])).stdout;
  t.true((await listed('settled')).includes(String(inv.invoice_id)), 'settle-invoice settled it');
  t.true((await listed('settled_late')).includes(String(late.invoice_id)), 'credit-late-payment credited it');

  // Restore drill: backup while svcd serves, restore, a node on the copy (in the foreground, as written:
  // here in the background on ephemeral ports), then the other shell's checks against it
  const drill = docBlock(DOC,
    'SHA=$(node src/bin/svc-admin.mjs --data-dir /srv/svc/data backup /srv/backups/svc-2026-05-01');
  const [backupLine, restoreLine, startLine, ...rest] = drill.body.trim().split('\n');
  t.deepEqual(rest, [], 'the drill block is backup, restore, start');
  t.regex(startLine!, /^SVC_DATA_DIR=\/srv\/svc\/restored node src\/bin\/svcd\.mjs start /);
  await runBlockText(`${backupLine}\n${restoreLine}\n`);
  const ready = join(tmp, 'restored-ready.json');
  const node = spawn('bash', ['-c', paths(startLine!)], {
    cwd: repo, stdio: ['ignore', 'pipe', 'pipe'],
    // ephemeral ports, a ready file, and one process whatever the box's cores (as test/support/svcd.ts)
    env: {
      ...env, SVC_EDGE_PORT: '0', SVC_HTTP_PORT: '0', SVC_BACKEND_PORT: '0', SVC_READY_FILE: ready,
      SVC_GATEWAY_PROCESSES: '0',
    },
  });
  let nodeErr = '';
  node.stderr.on('data', (d) => { nodeErr += d; });
  node.stdout.resume();
  t.teardown(() => { if (node.exitCode === null) node.kill('SIGKILL'); });
  await until('the restored node ready', () => existsSync(ready) || node.exitCode !== null, { ms: 90_000 });
  t.is(node.exitCode, null, nodeErr);
  const edge = (JSON.parse(readFileSync(ready, 'utf8')) as { edge: string }).edge;
  const restoredEdge = `127.0.0.1:${edge.slice(edge.lastIndexOf(':') + 1)}`;
  const checks = await runBlock('export SVC_EDGE_PIN=', { SVC_EDGE: restoredEdge });
  t.regex(checks.stdout, /^valid: true$/m, checks.stdout);
  node.kill('SIGTERM');
  await until('the restored node to stop', () => node.exitCode !== null, { ms: 30_000 });
  t.is(node.exitCode, 0, nodeErr);

  async function runBlockText(script: string) {
    const r = await bash(paths(script), { cwd: repo, env });
    t.is(r.code, 0, `${script}\n${r.stderr.slice(-4000)}`);
  }
});
