// Key rotation is crash-safe: a process killed (SIGKILL) at any point of rotating leaves the old key
// set or the new one — never a data dir a node cannot start from. The new key files are written and
// synced before keyring.json is replaced in one rename (src/core/node-identity.ts).
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { verifyWithRawKey } from '../../src/protocol/ed25519.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KEYRING_FILE, NodeIdentity } from '../../src/core/node-identity.ts';
import { Svcd } from '../support/svcd.ts';

const LOOP = fileURLToPath(new URL('../support/rotate-loop.ts', import.meta.url));

/** Starts the rotation loop on `dir`, kills it once it has reported `n` rotations; the last count it reported. */
function rotateThenKill(dir: string, n: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import=tsx', LOOP, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '', last = 0;
    child.stdout.on('data', (d: Buffer) => {
      out += d;
      const seen = [...out.matchAll(/rotated (\d+)\n/g)].map((m) => Number(m[1]));
      last = seen.at(-1) ?? 0;
      if (last >= n && child.exitCode === null) child.kill('SIGKILL');
    });
    child.stderr.on('data', (d: Buffer) => { err += d; });
    child.on('exit', (_code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`rotation loop exited on its own: ${err}`));
      else resolve(last);
    });
  });
}

/** Every key in the loaded set can sign and be checked; returns the number of signing keys. */
function checkKeySet(dir: string): number {
  const id = NodeIdentity.loadOrCreate(dir);
  const data = Buffer.from('after the crash');
  const sig = id.sign(data);
  const keys = id.publishedKeys();
  if (!verifyWithRawKey(Buffer.from(keys.at(-1)!.public_key, 'base64url'), data, sig)) {
    throw new Error('the current key does not verify its own signature');
  }
  if (keys.at(-1)!.key_id !== id.keyId || keys.filter((k) => k.status === 'current').length !== 1) {
    throw new Error('the key set has no single current key');
  }
  id.bctKey();
  if (id.resultKeys().length !== keys.length) throw new Error('result keys and signing keys differ in number');
  return keys.length;
}

test('SIGKILL at any point of a rotation leaves the old or the new key set, and it loads', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-rotate-crash-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const genesis = NodeIdentity.loadOrCreate(dir).keyId;
  let total = 0;
  for (const n of [1, 3, 2, 5, 4]) {
    const reported = await rotateThenKill(dir, n);
    const count = checkKeySet(dir) - 1; // rotations the key set records
    // the kill came after `reported` completed rotations, perhaps in the middle of one more
    t.true(count === total + reported || count === total + reported + 1, `${count} after ${total}+${reported}`);
    total = count;
  }
  const id = NodeIdentity.loadOrCreate(dir);
  t.is(id.nodeId, `svc-node-${genesis}`, 'the node keeps its id');
  // key files no key set names: left by kills that came after a rotation wrote them, before its switch
  const named = new Set(id.keyFiles());
  const orphans = readdirSync(join(dir, 'keys')).filter((f) => !named.has(`keys/${f}`)).length;
  t.log(`${total} rotations survived 5 kills; ${orphans} key files from rotations killed before their switch`);
});

test('a rotation killed before its switch (new key files, half a keyring.json.tmp): svcd starts on the old key set',
  async (t) => {
    const s = new Svcd();
    t.teardown(async () => { await s.stop(); s.cleanup(); });
    const old = NodeIdentity.loadOrCreate(s.dataDir);
    old.rotate(new Date());
    const keyId = old.keyId;
    // what a kill between the key files and the rename leaves: unreferenced key files, a partial temp file
    writeFileSync(join(s.dataDir, 'keys', 'node-ed25519-00000000deadbeef.pem'), '-----BEGIN PRIV');
    writeFileSync(join(s.dataDir, `${KEYRING_FILE}.tmp`), '{"format": "svc_keyr');
    await s.start(['core']);
    const c = await s.edge();
    t.teardown(() => c.close());
    const hello = await c.request('HELLO', {});
    t.is((hello.edge_proof as { key_id: string }).key_id, keyId);
    t.is((hello.node_keys as unknown[]).length, 2);
    // the next rotation overwrites the partial temp file
    const c2 = await s.admin();
    t.teardown(() => c2.close());
    const r = await c2.request('ROTATE_NODE_KEY', {});
    t.is((r.key_set as { signing: unknown[] }).signing.length, 3);
  });
