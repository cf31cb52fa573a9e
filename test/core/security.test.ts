// Secrets stay secret: machine tokens are stored only as SHA-256, never logged; key files and the
// admin socket are 0600 and the data dir 0700; toJSON of the node identity reveals no key.
import test from 'ava';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Svcd } from '../support/svcd.ts';
import { NodeIdentity } from '../../src/core/node-identity.ts';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    const st = statSync(p);
    return st.isDirectory() ? filesUnder(p) : st.isFile() ? [p] : [];
  });
}

test('machine tokens are stored hashed and never logged; key files 0600, data dir 0700', async (t) => {
  // a data dir that does not exist yet: svcd creates it (0700) and its key files (0600)
  const s = new Svcd({ SVC_LOG_LEVEL: 'trace' }, join(mkdtempSync(join(tmpdir(), 'svc-sec-')), 'data'));
  await s.start(['start']);
  let token = '';
  try {
    const inv = await (await fetch(`${s.ready.http}/api/v1/invoices`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ machine_id: 'sec-m', units: 1, network: 'TRON', asset: 'USDT' }),
    })).json() as any;
    token = inv.machine_token;
    t.regex(token, /^svcm_/);
    // use it, and fail with a wrong one, so any request logging would have seen both
    await fetch(`${s.ready.http}/api/v1/balance`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: '{"machine_id":"sec-m"}',
    });
    await fetch(`${s.ready.http}/api/v1/balance`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer svcm_wrong-token-value' },
      body: '{"machine_id":"sec-m"}',
    });
  } finally {
    t.is(await s.stop(), 0);
  }
  const secret = token.slice(5);
  const hash = createHash('sha256').update(token).digest('hex');
  let sawHash = false;
  for (const f of filesUnder(join(s.dataDir, 'ledger'))) {
    const bytes = readFileSync(f);
    t.false(bytes.includes(secret), `${f} holds the raw token`);
    if (bytes.includes(hash)) sawHash = true;
  }
  t.true(sawHash, 'the token\'s SHA-256 is what the store keeps');
  t.false((s.stdout + s.stderr).includes(secret), 'the token is not in the logs');
  t.false((s.stdout + s.stderr).includes('wrong-token-value'), 'nor is a wrong one');
  t.is(statSync(s.dataDir).mode & 0o777, 0o700);
  for (const f of ['node-ed25519.pem', 'result-key.bin', 'bct-key.bin', 'quote-key.bin', 'edge-key.pem']) {
    t.is(statSync(join(s.dataDir, f)).mode & 0o777, 0o600, f);
  }
  const id = NodeIdentity.loadOrCreate(s.dataDir);
  const json = JSON.stringify(id);
  t.regex(json, /"secret":"\[redacted\]"/);
  t.false(json.includes(readFileSync(join(s.dataDir, 'result-key.bin')).toString('hex')));
  s.cleanup();
});

test('a pre-existing data dir open to group/other (0755) is tightened to 0700 before svcd serves', async (t) => {
  const dir = join(mkdtempSync(join(tmpdir(), 'svc-sec-')), 'data');
  mkdirSync(dir, { mode: 0o755 });
  chmodSync(dir, 0o755); // whatever the umask left
  t.is(statSync(dir).mode & 0o777, 0o755);
  const s = new Svcd({}, dir);
  await s.start();
  t.teardown(() => s.cleanup());
  t.is(statSync(dir).mode & 0o777, 0o700);
  const code = await s.stop();
  // an exit by a signal (code null) names the signal and what svcd printed last
  t.is(code, 0, `signal ${String(s.proc?.signalCode)}: ${s.stderr.slice(-1500)}${s.stdout.slice(-1500)}`);
});

test('a shared sticky data dir (like /tmp) is refused, not changed', async (t) => {
  const dir = join(mkdtempSync(join(tmpdir(), 'svc-sec-')), 'shared');
  mkdirSync(dir);
  chmodSync(dir, 0o1777);
  const s = new Svcd({}, dir);
  t.teardown(() => s.cleanup());
  const r = await s.startExpectingFailure();
  t.is(r.code, 1);
  t.regex(r.output, /is shared or not owned by this user/);
  t.is(statSync(dir).mode & 0o7777, 0o1777);
});
