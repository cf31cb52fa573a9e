// The pulse chain across periods and restarts: every pulse is signed, links to the previous
// output, reveals the previous seed (which matches its commitment), and pre-commits the next one;
// a restart continues the chain (the committed seed survives) and marks a late pulse as a gap —
// which reveals like any other, so `svc pulse` (the kit's verifier, reveal required) verifies it.
import test from 'ava';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyWithRawKey } from '../../src/protocol/ed25519.ts';
import { outputHash, signedBytes, type SignedPulse } from '../../src/protocol/pulse-format.ts';
import { verifyPublishedPulse } from '../../src/client/verify.ts';
import { ManualClock, openCore } from '../support/core-fixture.ts';

// the timers never fire within a test: every pulse here is emitted at a time the test sets
const PERIOD = 3_600_000;
const ENV = { SVC_PULSE_PERIOD_MS: String(PERIOD) };

test('pulse chain: signed, linked, seeds revealed match their commitments, ' +
  'and it survives a restart with a gap marked', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-pulses-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const clock = new ManualClock();
  let core = await openCore(t, ENV, { clock, dir });
  for (let i = 0; i < 2; i++) {
    clock.advance(PERIOD);
    await core.ctx.chain.emit();
  }
  await core.close();
  // down for exactly 1.5 periods: the restart's pulse is on time ("ok"), a millisecond more is a gap
  clock.advance(PERIOD * 1.5);
  core = await openCore(t, ENV, { clock, dir });
  await core.close();
  clock.advance(PERIOD * 1.5 + 1);
  core = await openCore(t, ENV, { clock, dir });
  clock.advance(PERIOD);
  await core.ctx.chain.emit();
  const latest = (await core.handle('PULSE', {}, undefined, 'gateway')) as unknown as SignedPulse & {
    public_key: string;
  };
  const pub = Buffer.from(latest.public_key, 'base64url');
  const chain: SignedPulse[] = [];
  for (let i = 0; i <= latest.pulse.index; i++) {
    chain.push((await core.handle('PULSE', { index: i }, undefined, 'gateway')) as unknown as SignedPulse);
  }

  t.deepEqual(chain.map((p) => p.pulse.status), ['genesis', 'ok', 'ok', 'ok', 'gap', 'ok']);
  const t0 = Date.parse(chain[0]!.pulse.time_start);
  t.deepEqual(chain.map((p) => Date.parse(p.pulse.time_start) - t0), [0, 1, 2, 3.5, 5, 6].map((k) => k * PERIOD)
    .map((ms, i) => (i >= 4 ? ms + 1 : ms)), 'each pulse is timed by the clock it was emitted at');
  for (let i = 0; i < chain.length; i++) {
    const p = chain[i]!;
    const sig = Buffer.from(p.signature, 'base64url');
    t.true(verifyWithRawKey(pub, signedBytes(p.pulse), sig), `signature ${i}`);
    t.is(outputHash(p.pulse, sig), p.output_hash);
    t.is(p.pulse.chain_id, chain[0]!.pulse.chain_id);
    if (i === 0) continue;
    const prev = chain[i - 1]!;
    t.is(p.pulse.prev_output, prev.output_hash, `link ${i}`);
    t.is(p.pulse.commit, prev.pulse.commit_next, `pulse ${i} uses the seed pulse ${i - 1} committed to`);
    t.is(p.pulse.revealed_index, i - 1);
    const revealed = Buffer.from(p.pulse.revealed_seed!, 'hex');
    t.is(createHash('sha256').update(revealed).digest('hex'), prev.pulse.commit, `reveal ${i - 1}`);
    // what `svc pulse` runs (the kit's verifier, which needs the reveal): every link, the gap's too
    const v = await verifyPublishedPulse(p, prev, latest.public_key);
    t.true(v.ok, `pulse ${i} (${p.pulse.status}): ${v.checks.filter((c) => !c.ok).map((c) => c.name).join('; ')}`);
  }
});
