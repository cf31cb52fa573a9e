// svcd whose data dir's disk fills up under paid flows: the write the disk refuses is answered
// service_unavailable, and so is every write after it, also once there is room again (LevelDB would drop
// writes acknowledged after a refused one at the next start: test/store/level-disk-full.test.ts); HEALTH
// says why, so a load balancer stops sending; reads go on. Started again, the node has every receipt a
// client was given, its ledger checks, and paid flows run.
import test from 'ava';
import { join } from 'node:path';
import { testNeeding } from '../support/needs.ts';
import { SMALL_FS, smallFs } from '../support/small-fs.ts';
import { fundMachine, paidExecution, Svcd } from '../support/svcd.ts';

testNeeding(test, 'a full disk under paid flows: refused from the first failed write until svcd is started again, '
  + 'HEALTH says why; started again, every receipt given is there and the ledger checks', SMALL_FS, async (t) => {
  t.timeout(300_000);
  const fs = smallFs(t, 64);
  const node = new Svcd({ SVC_LOG_LEVEL: 'info' }, join(fs.dir, 'data'));
  await node.start(['core']);
  t.teardown(() => node.stop());
  const M = 'disk-full';
  const token = await fundMachine(node, M, 100);
  const c = await node.edge();
  const flow = () => paidExecution(c, M, token, 'attest-event', { bits: 64, bytes: 16 }, { plain_hex: '00' });
  const given: string[] = [];
  for (let i = 0; i < 5; i++) given.push((await flow()).receipt_id as string);
  fs.fill(1024 * 1024);
  let refused: { code?: string; message?: string } | null = null;
  while (!refused && given.length < 200_000) {
    await flow().then((r) => { given.push(r.receipt_id as string); }, (e: unknown) => { refused = e as never; });
  }
  t.is(refused!.code, 'service_unavailable', JSON.stringify(refused));
  t.log(`${given.length} flows before the disk refused one: ${refused!.message}`);
  const admin = await node.admin();
  const health = await admin.request('HEALTH', {});
  t.is(health.status, 'unavailable');
  t.regex(String((health.store as { reason?: string }).reason), /refused a write \(.*No space left on device/);
  t.regex(node.stdout + node.stderr, /"level":40.*ledger disk refused/, 'the operator\'s log says it, with the cause');
  fs.empty();
  for (let i = 0; i < 3; i++) {
    const e = await flow().then(() => null, (x: unknown) => x as { code?: string; message?: string });
    t.is(e?.code, 'service_unavailable', 'still refused once there is room: svcd must be started again');
  }
  const last = given.at(-1)!;
  t.like(await c.request('VERIFY_RECEIPT', { receipt_id: last, machine_id: M }), { valid: true }, 'reads go on');
  c.close();
  admin.close();
  t.is(await node.stop(), 0);
  await node.start(['core']);
  const again = await node.edge();
  t.teardown(() => again.close());
  const missing: string[] = [];
  for (const r of given) {
    const v = await again.request('VERIFY_RECEIPT', { receipt_id: r, machine_id: M }).catch(() => null);
    if (v?.valid !== true) missing.push(r);
  }
  t.deepEqual(missing, [], `every one of the ${given.length} receipts given is there after the start`);
  const more = await paidExecution(again, M, token, 'attest-event', { bits: 64, bytes: 16 }, { plain_hex: '00' });
  t.regex(more.receipt_id as string, /^rcpt_/);
  const check = await node.stopAndCheckLedger();
  t.true(check.ok, check.problems.join('; '));
});
