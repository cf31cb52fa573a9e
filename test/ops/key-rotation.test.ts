// Key rotation on a real svcd: `svc-admin rotate-node-key` switches the signing, result-tag
// and BCT keys; what was made before still verifies — receipts through POST /api/v1/receipts/verify and
// offline with the kit given the manifest's key set, the pulse chain link by link across the switch, log
// inclusion proofs, BCT packets, result tags — the manifest lists every key with its window, a second
// rotation works, and a restart keeps the new key set.
import test from 'ava';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fundMachine, paidExecution, cliJson } from '../support/svcd.ts';
import { startSvcd } from '../support/start-svcd.ts';
import { httpJson } from '../support/http-from.ts';
import type { SvcClient } from '../../src/client/client.ts';
import {
  verifyLogInclusion, verifyPulse, verifyReceipt, verifyTimestampProof,
} from '../../src/kit/verify-api.ts';

const M = 'key-rotation';

interface Made { receipt_id: string; material: string; packet: string; plain: string; ts: any }

/** One of each thing a key signs or seals: a receipt (and its result material), a BCT packet, a timestamp. */
async function makeAll(c: SvcClient, token: string, tag: string): Promise<Made> {
  const plain = Buffer.from(`sealed ${tag}`).toString('hex');
  const bct = await paidExecution(c, M, token, 'make-bct', { plain_hex: plain }, { plain_hex: plain });
  const digest = createHash('sha256').update(tag).digest('hex');
  const ts = await paidExecution(c, M, token, 'timestamp-proof', { bytes: 32 }, { plain_hex: digest });
  const material = Buffer.from(JSON.stringify({
    service: bct.service, quote_id: bct.quote_id, input_digest: bct.input_digest,
    output_digest: bct.output_digest, result_tag: bct.result_tag,
  })).toString('hex');
  return { receipt_id: bct.receipt_id as string, material, packet: bct.packet_hex as string, plain, ts };
}

test('rotate-node-key: old and new receipts, pulses, log proofs, BCT packets and result tags all verify; '
  + 'the manifest lists every key with its window; twice; across a restart', async (t) => {
  const s = await startSvcd(t);
  const token = await fundMachine(s, M, 20);
  let c = await s.edge();
  t.teardown(() => c.close());
  const http = s.ready.http!;
  const before = await makeAll(c, token, 'before');
  // a GET_PULSE output of the last period under the old key: the first pulse under the new one reveals its seed
  const pulsed = await paidExecution(c, M, token, 'get-pulse', { bits: 256 });
  const resultFile = join(s.dataDir, 'get-pulse-result.json');
  writeFileSync(resultFile, JSON.stringify(pulsed));
  const hello0 = await c.request('HELLO', {});
  const oldKey = (hello0.edge_proof as { key_id: string }).key_id;

  const rot = await s.svcAdmin(['--json', 'rotate-node-key']);
  t.is(rot.code, 0, rot.stderr);
  const r1 = cliJson(rot);
  t.is(r1.retired_key_id, oldKey);
  t.not(r1.key_id, oldKey);
  t.is(r1.node_id, hello0.node_id, 'the node keeps its id');
  t.is(r1.key_set.signing.length, 2);
  t.is(r1.key_set.bct.length, 2);
  t.is(r1.key_set.result.length, 2);
  const after = await makeAll(c, token, 'after');

  // both receipts verify through the public HTTP route, each naming its own key
  const verifyHttp = (id: string) =>
    httpJson(`${http}/api/v1/receipts/verify`, 'POST', { machine_id: M, receipt_id: id });
  const [va, vb] = [await verifyHttp(before.receipt_id), await verifyHttp(after.receipt_id)];
  t.is(va.status, 200);
  t.true(va.body.valid, JSON.stringify(va.body));
  t.true(vb.body.valid, JSON.stringify(vb.body));
  t.is(va.body.key_id, oldKey);
  t.is(vb.body.key_id, r1.key_id);
  t.is(va.body.key_valid_until, r1.rotated_at, 'the retired key\'s window ends at the rotation');
  t.is(vb.body.key_valid_from, r1.rotated_at);

  // the manifest (first read after the rotation) lists both keys with their windows
  const manifest = (await httpJson(`${http}/.well-known/svc/svc_public_manifest.json`, 'GET')).body;
  t.is(manifest.node.key_id, r1.key_id);
  t.is(manifest.node.node_id, hello0.node_id);
  t.deepEqual(manifest.node.keys.map((k: any) => [k.key_id, k.valid_from, k.valid_until, k.status]), [
    [oldKey, null, r1.rotated_at, 'retired'],
    [r1.key_id, r1.rotated_at, null, 'current'],
  ]);
  const nodes = (await httpJson(`${http}/.well-known/svc/nodes.json`, 'GET')).body;
  t.is(nodes.nodes[0].keys.length, 2);
  const bootstrap = (await httpJson(`${http}/.well-known/svc/bootstrap.json`, 'GET')).body;
  t.deepEqual(bootstrap.node_keys, manifest.node.keys);
  const trust = await (await fetch(`${http}/trust`)).text();
  t.true(trust.includes(oldKey) && trust.includes(r1.key_id), '/trust lists both keys');

  // offline, with the kit and nothing but the published key set
  for (const v of [va.body, vb.body]) t.deepEqual((await verifyReceipt(v, manifest)).reason, null);
  t.deepEqual((await verifyReceipt(va.body, nodes)).reason, null, 'nodes.json works as well');
  t.is((await verifyReceipt(va.body, manifest.node.public_key)).reason, 'unknown_key',
    'the current key alone does not verify a receipt of the retired one');
  // windows are checked: the retired key cannot vouch for a receipt issued after its window
  const shifted = structuredClone(manifest);
  shifted.node.keys[0].valid_until = new Date(Date.parse(va.body.receipt.issued_at) - 1).toISOString();
  t.is((await verifyReceipt(va.body, shifted)).reason, 'outside_key_window');

  // the log: inclusion proofs from before and after verify with the key set, and the timestamp tokens
  for (const m of [before, after]) {
    const entry = Buffer.from(m.ts.log.entry_base64, 'base64');
    t.is((await verifyLogInclusion(m.ts.tlog_proof, entry, manifest)).reason, null);
    t.is((await verifyTimestampProof(m.ts, manifest)).reason, null);
  }
  t.is(before.ts.log.origin, after.ts.log.origin, 'the log keeps its origin across the rotation');

  // the pulse chain: the pulse before the rotation (old key) and the first under the new key link up
  const k1 = r1.first_pulse_index as number;
  const pk = await c.request('PULSE', { index: k1 - 1 });
  const pk1 = await c.request('PULSE', { index: k1 });
  t.is((pk.pulse as any).key_id, oldKey);
  t.is((pk1.pulse as any).key_id, r1.key_id);
  t.is((await verifyPulse(pk1, pk, { nodeKeys: manifest })).reason, null);
  const cli = await s.svc(['--json', 'pulse', String(k1)]);
  t.is(cli.code, 0, cli.stderr);
  t.true(JSON.parse(cli.stdout).verified, 'svc pulse checks the link across the rotation');
  t.log(`GET_PULSE in period ${String((pulsed.pulse as any).index)}; first pulse under the new key: ${k1}`);
  const vp = await s.svc(['--json', 'verify-pulse', '--fetch', '--result', resultFile]);
  t.is(vp.code, 0, vp.stderr + vp.stdout);
  t.true(JSON.parse(vp.stdout).verified, 'the output from before the rotation recomputes from the revealed seed');

  // BCT packets sealed before open after; result tags from before still check
  const opened = await paidExecution(c, M, token, 'verify-bct', { packet_hex: before.packet }, {
    packet_hex: before.packet,
  });
  t.deepEqual([opened.valid, opened.plain_hex], [true, before.plain]);
  t.not(before.packet.slice(8, 24), after.packet.slice(8, 24), 'new packets name the new BCT key id');
  for (const m of [before, after]) {
    const bytes = m.material.length / 2;
    const v = await paidExecution(c, M, token, 'verify-result', { bytes }, { packet_hex: m.material });
    t.true(v.valid as boolean, JSON.stringify(v));
  }

  // a second rotation, then a restart: the newest key stays current and everything still verifies
  const r2 = cliJson(await s.svcAdmin(['--json', 'rotate-node-key']));
  t.is(r2.retired_key_id, r1.key_id);
  const third = await makeAll(c, token, 'third');
  c.close();
  await s.stop();
  await s.start();
  c = await s.edge();
  const hello = await c.request('HELLO', {});
  t.is((hello.edge_proof as { key_id: string }).key_id, r2.key_id, 'the restart keeps the new key');
  t.is(hello.node_id, hello0.node_id);
  const hv = await s.svc(['--json', 'hello']);
  t.is(hv.code, 0, `svc hello accepts the rotated node's edge proof: ${hv.stderr}`);
  const m2 = (await httpJson(`${s.ready.http!}/.well-known/svc/svc_public_manifest.json`, 'GET')).body;
  t.deepEqual(m2.node.keys.map((k: any) => k.key_id), [oldKey, r1.key_id, r2.key_id]);
  t.deepEqual(m2.node.keys[1].valid_until, r2.rotated_at);
  for (const m of [before, after, third]) {
    const v = await httpJson(`${s.ready.http!}/api/v1/receipts/verify`, 'POST', {
      machine_id: M, receipt_id: m.receipt_id,
    });
    t.true(v.body.valid, m.receipt_id);
    t.is((await verifyReceipt(v.body, m2)).reason, null);
  }
  const again = await paidExecution(c, M, token, 'verify-bct', { packet_hex: before.packet }, {
    packet_hex: before.packet,
  });
  t.true(again.valid as boolean, 'a packet sealed two rotations ago opens after a restart');
  const audit = await s.svcAdmin(['--json', 'audit']);
  t.is(audit.code, 0, `every receipt verifies in the audit: ${audit.stdout}`);
});

test('two rotate-node-key at once: each reply names its own key (key_id = SHA-256 prefix of its public key)',
  async (t) => {
    const s = await startSvcd(t, {}, { args: ['core'] });
    const [a, b] = await Promise.all([
      s.svcAdmin(['--json', 'rotate-node-key']), s.svcAdmin(['--json', 'rotate-node-key']),
    ]);
    const replies = [cliJson(a), cliJson(b)];
    for (const r of replies) {
      const raw = Buffer.from(r.public_key as string, 'base64url');
      t.is(createHash('sha256').update(raw).digest('hex').slice(0, 16), r.key_id, JSON.stringify(r));
      const inSet = (r.key_set as { signing: { key_id: string }[] }).signing.map((k) => k.key_id);
      t.true(inSet.includes(r.key_id as string) && inSet.includes(r.retired_key_id as string));
    }
    t.not(replies[0]!.key_id, replies[1]!.key_id);
  });
