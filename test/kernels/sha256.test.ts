import test from 'ava';
import { createHash, createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { hmac as nobleHmac } from '@noble/hashes/hmac.js';
import { Kernels } from '../../src/kernels/index.ts';
import { hex, interestingLengths, ownVectors, prng, readJson, sharedTest, unhex } from '../helpers.ts';

const k = Kernels.create();

test('SHA-256: FIPS 180-4 examples typed into the project', (t) => {
  const v = ownVectors('sha256.json');
  for (const c of v.vectors) {
    const msg = c.repeat ? new Uint8Array(c.repeat.count).fill(parseInt(c.repeat.byte_hex, 16)) : unhex(c.msg_hex);
    t.is(hex(k.sha256(msg)), c.digest, c.name);
  }
});

function parseRsp(text: string): Record<string, string>[] {
  const recs: Record<string, string>[] = [];
  let cur: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '').trim();
    if (!line || line.startsWith('#') || line.startsWith('[')) {
      if (Object.keys(cur).length) { recs.push(cur); cur = {}; }
      continue;
    }
    const m = /^(\w+) = (\w*)$/.exec(line);
    if (m) cur[m[1]!] = m[2]!;
  }
  if (Object.keys(cur).length) recs.push(cur);
  return recs;
}

for (const file of ['SHA256ShortMsg.rsp', 'SHA256LongMsg.rsp']) {
  sharedTest(test, `SHA-256: NIST CAVP ${file}`, `nist-cavp-shs/${file}`, (t, path) => {
    const recs = parseRsp(readFileSync(path, 'latin1')).filter((r) => r.Len !== undefined);
    t.true(recs.length >= 64);
    for (const r of recs) {
      const msg = unhex(r.Msg ?? "").subarray(0, Number(r.Len) / 8);
      t.is(hex(k.sha256(msg)), r.MD ?? "", `Len=${r.Len}`);
    }
  });
}

sharedTest(test, 'SHA-256: NIST CAVP Monte Carlo (100 checkpoints)', 'nist-cavp-shs/SHA256Monte.rsp', (t, path) => {
  const recs = parseRsp(readFileSync(path, 'latin1'));
  let seed = unhex(recs.find((r) => r.Seed)!.Seed!);
  const checkpoints = recs.filter((r) => r.COUNT !== undefined);
  t.is(checkpoints.length, 100);
  for (const cp of checkpoints) {
    let [a, b, c] = [seed, seed, seed];
    for (let i = 3; i < 1003; i++) {
      const m = new Uint8Array(96); m.set(a, 0); m.set(b, 32); m.set(c, 64);
      [a, b, c] = [b, c, k.sha256(m)];
    }
    t.is(hex(c), cp.MD ?? "", `COUNT=${cp.COUNT}`);
    seed = c;
  }
});

test('SHA-256: equals node:crypto and @noble/hashes on lengths 0..70,000 (block boundaries + random)', (t) => {
  const r = prng(0x5a5a);
  const data = r.bytes(70000);
  for (const n of interestingLengths(7)) {
    const m = data.subarray(0, n);
    const want = createHash('sha256').update(m).digest('hex');
    t.is(hex(k.sha256(m)), want, `len ${n}`);
    if (n % 7 === 0) t.is(hex(nobleSha256(m)), want);
  }
});

test('SHA-256: thousands of random short messages equal node:crypto', (t) => {
  const r = prng(99);
  let bad = 0;
  for (let i = 0; i < 3000; i++) {
    const m = r.bytes(r.int(300));
    if (hex(k.sha256(m)) !== createHash('sha256').update(m).digest('hex')) bad++;
  }
  t.is(bad, 0);
});

test('SHA-256 streaming: any chunking equals one-shot (property)', (t) => {
  fc.assert(fc.property(fc.uint8Array({ maxLength: 3000 }), fc.array(fc.nat(400), { maxLength: 12 }), (data, cuts) => {
    const s = k.createSha256();
    let at = 0;
    for (const c of cuts) {
      s.update(data.subarray(at, Math.min(data.length, at + c)));
      at = Math.min(data.length, at + c);
    }
    s.update(data.subarray(at));
    return hex(s.digest()) === hex(k.sha256(data));
  }), { numRuns: 300 });
  t.pass();
});

test('SHA-256 streaming: a finalized hash refuses further use', (t) => {
  const s = k.createSha256();
  s.update(new Uint8Array(3));
  s.digest();
  t.throws(() => s.update(new Uint8Array(1)), { message: /finalized/ });
});

test('HMAC-SHA256: RFC 4231 test cases 1-7', (t) => {
  const v = ownVectors('hmac-sha256.json');
  for (const c of v.vectors) {
    const mac = k.hmacSha256(unhex(c.key), unhex(c.data));
    t.is(hex(mac.subarray(0, c.truncate ?? 32)), c.mac, c.name);
  }
});

const hmacTitle = 'HMAC-SHA256: Wycheproof hmac_sha256_test.json (valid pass, invalid rejected)';
sharedTest(test, hmacTitle, 'wycheproof/hmac_sha256_test.json', (t, path) => {
  const w = readJson(path);
  let valid = 0, invalid = 0;
  for (const g of w.testGroups) {
    for (const c of g.tests) {
      const mac = k.hmacSha256(unhex(c.key), unhex(c.msg)).subarray(0, g.tagSize / 8);
      const matches = hex(mac) === c.tag;
      if (c.result === 'valid') { t.true(matches, `tcId ${c.tcId}`); valid++; }
      else { t.false(matches, `tcId ${c.tcId} must not verify`); invalid++; }
    }
  }
  t.true(valid > 0 && invalid > 0);
});

test('HMAC-SHA256: equals node:crypto and @noble/hashes for random keys (0..200 B) and messages', (t) => {
  const r = prng(4231);
  for (let i = 0; i < 1500; i++) {
    const key = r.bytes(r.int(200)), msg = r.bytes(i % 50 === 0 ? r.int(70000) : r.int(600));
    const want = createHmac('sha256', key).update(msg).digest('hex');
    t.is(hex(k.hmacSha256(key, msg)), want);
    if (i % 10 === 0) t.is(hex(nobleHmac(nobleSha256, key, msg)), want);
  }
});

test('HMAC-SHA256 keyed (pads absorbed once): RFC 4231 cases, and node:crypto on random keys and messages', (t) => {
  for (const c of ownVectors('hmac-sha256.json').vectors) {
    t.is(hex(k.hmacSha256Keyed(unhex(c.key))(unhex(c.data)).subarray(0, c.truncate ?? 32)), c.mac, c.name);
  }
  const r = prng(2104);
  for (let i = 0; i < 60; i++) {
    const key = r.bytes(r.int(200));
    const mac = k.hmacSha256Keyed(key);
    // one keyed function, many messages: each call starts again from the absorbed pads
    for (let j = 0; j < 20; j++) {
      const msg = r.bytes(j === 0 ? 0 : j % 7 === 0 ? r.int(5000) : r.int(130));
      t.is(hex(mac(msg)), createHmac('sha256', key).update(msg).digest('hex'));
    }
  }
  // other calls on the instance between MACs (they reuse its scratch memory) change nothing
  const key = r.bytes(32), msg = r.bytes(77), mac = k.hmacSha256Keyed(key);
  const first = hex(mac(msg));
  k.sha256(r.bytes(100_000));
  k.hmacSha256(r.bytes(90), r.bytes(300));
  t.is(hex(mac(msg)), first);
});

test('argument checks name the argument', (t) => {
  t.throws(() => k.sha256('abc' as unknown as Uint8Array), { message: /data must be a Uint8Array/ });
  t.throws(() => k.hchacha20(new Uint8Array(31), new Uint8Array(16)), { message: /key must be 32 bytes/ });
});
