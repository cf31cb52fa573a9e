// The pulse chain across periods and restarts: every pulse is signed, links to the previous
// output, reveals the previous seed (which matches its commitment), and pre-commits the next one;
// a restart continues the chain (the committed seed survives) and marks a late pulse as a gap —
// which reveals like any other, so `svc pulse` (the kit's verifier, reveal required) verifies it.
import test from 'ava';
import { createHash } from 'node:crypto';
import { Svcd } from '../support/svcd.ts';
import { verifyWithRawKey } from '../../src/protocol/ed25519.ts';
import { outputHash, signedBytes, type SignedPulse } from '../../src/protocol/pulse-format.ts';
import { verifyPublishedPulse } from '../../src/client/verify.ts';

test('pulse chain: signed, linked, seeds revealed match their commitments, ' +
  'and it survives a restart with a gap marked', async (t) => {
  const s = await Svcd.start({ SVC_PULSE_PERIOD_MS: '300' });
  await new Promise((r) => setTimeout(r, 1000));
  t.is(await s.stop(), 0);
  await new Promise((r) => setTimeout(r, 700)); // down for more than 1.5 periods
  await s.start();
  await new Promise((r) => setTimeout(r, 700));
  const c = await s.edge();
  const latest = (await c.request('PULSE', {})) as unknown as SignedPulse & { public_key: string };
  const pub = Buffer.from(latest.public_key, 'base64url');
  const chain: SignedPulse[] = [];
  for (let i = 0; i <= latest.pulse.index; i++) {
    chain.push((await c.request('PULSE', { index: i })) as unknown as SignedPulse);
  }
  c.close();
  await s.stop();
  s.cleanup();

  t.true(chain.length >= 5, `${chain.length} pulses`);
  t.is(chain[0]!.pulse.status, 'genesis');
  const statuses = chain.map((p) => p.pulse.status);
  t.true(statuses.includes('gap'), `a restart after downtime is marked: ${statuses.join(',')}`);
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
