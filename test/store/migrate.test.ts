// `svcd migrate --to postgres://…` (docs/scale-out.md "Moving up"): a LevelDB node with 10,000 paid flows
// over ten machines is copied into an empty PostgreSQL database by the real command; its two audits are
// equal. Then svcd starts on the database with the same data dir: its pulse chain goes on from where it
// was, an old receipt verifies, a new paid flow runs, and the audit of the database is clean with every
// receipt. A migration while the node holds its LevelDB ledger, a second one into the now full database
// and one without --to are refused.
import test from 'ava';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fundCore, openCore } from '../support/core-fixture.ts';
import { testNeeding } from '../support/needs.ts';
import { POSTGRES, postgresForFile } from '../support/postgres.ts';
import { BIN, paidExecution, runBin, Svcd } from '../support/svcd.ts';

const postgres = postgresForFile(test);
const FLOWS = 10_000;
const MACHINES = 10;
const UNLIMITED = { SVC_RATE_PUBLIC_LOW: '1000000/60', SVC_RATE_PAID_EXECUTION: '1000000/60' };

testNeeding(test, 'svcd migrate: a LevelDB ledger of 10,000 flows into PostgreSQL, audits equal; svcd goes on there',
  POSTGRES, async (t) => {
  t.timeout(600_000);
  const svcd = new Svcd({ ...UNLIMITED });
  const dir = svcd.dataDir;
  t.teardown(() => svcd.cleanup()); // after the stop below (teardowns run last first)
  const core = await openCore(t, UNLIMITED, { dir });
  const machines = await Promise.all(Array.from({ length: MACHINES }, async (_, i) => ({
    id: `migrated-${i}`, token: await fundCore(core, `migrated-${i}`, 10),
  })));
  const receipts: { id: string; machine: { id: string; token: string } }[] = [];
  const DIGEST = { plain_hex: 'ab'.repeat(32) };
  /** a GET_PULSE flow, and every tenth a TIMESTAMP_PROOF (its transparency log moves with the ledger) */
  const flow = async (n: number) => {
    const m = machines[n % MACHINES]!;
    const auth = { token: m.token };
    const stamp = n % 10 === 0;
    const [service, command] = stamp ? ['timestamp-proof', 'TIMESTAMP_PROOF'] : ['get-pulse', 'GET_PULSE'];
    const q = await core.handle('QUOTE', { service, machine_id: m.id, bits: 64, ...(stamp ? { bytes: 32 } : {}) },
      undefined, 'gateway');
    await core.handle('ACCEPT_QUOTE', { quote_id: q.quote_id, machine_id: m.id }, auth, 'gateway');
    const e = await core.handle(command, { quote_id: q.quote_id, machine_id: m.id, ...(stamp ? DIGEST : {}) }, auth,
      'gateway');
    receipts.push({ id: e.receipt_id as string, machine: m });
  };
  for (let n = 0; n < FLOWS; n += 16) await Promise.all(Array.from({ length: 16 }, (_, k) => flow(n + k)));
  const pulseBefore = (await core.handle('HEALTH', {}, undefined, 'admin')).pulse as { latest_index: number };
  const url = await (await postgres()).freshDatabase();
  const env = { SVC_DATA_DIR: dir };
  const held = await runBin(BIN.svcd, ['migrate', '--to', url], env);
  t.is(held.code, 1);
  t.regex(held.stderr, /is svcd running\? stop it first/, 'a running node holds its LevelDB ledger');
  await core.close();

  t.is((await runBin(BIN.svcd, ['migrate'], env)).code, 2, 'no --to: usage');
  const m = await runBin(BIN.svcd, ['migrate', '--to', url], env);
  t.is(m.code, 0, m.stderr + m.stdout);
  t.log(m.stdout);
  t.regex(m.stdout, /audit before and after: equal \(10 machines, 10000 receipts/);
  t.notRegex(m.stdout + m.stderr, /postgres:\/\//, 'the URL is never printed');
  t.true(existsSync(join(dir, 'ledger')), 'the LevelDB ledger stays where it was');
  const again = await runBin(BIN.svcd, ['migrate', '--to', url], env);
  t.is(again.code, 1);
  t.regex(again.stderr, /already holds a ledger/);

  // the node on the database: same data dir, same keys
  Object.assign(svcd.env, { SVC_STORE: url });
  await svcd.start(['start']);
  t.teardown(() => svcd.stop());
  const admin = await svcd.admin();
  t.teardown(() => admin.close());
  const health = await admin.request('HEALTH', {});
  t.true((health.pulse as { latest_index: number }).latest_index > pulseBefore.latest_index,
    'the pulse chain goes on from where it was');
  const edge = await svcd.edge();
  t.teardown(() => edge.close());
  const first = receipts[0]!;
  const verified = await edge.request('VERIFY_RECEIPT', { receipt_id: first.id, machine_id: first.machine.id });
  t.is(verified.valid, true, `an old receipt verifies on the database: ${JSON.stringify(verified)}`);
  const m1 = machines[1]!;
  const fresh = await paidExecution(edge, m1.id, m1.token, 'timestamp-proof', { bits: 64, bytes: 32 }, DIGEST);
  t.is((fresh.token as { serial: number }).serial, FLOWS / 10, 'the timestamp log goes on from where it was');
  const audit = await runBin(BIN.admin, ['--data-dir', dir, '--json', 'audit']);
  t.is(audit.code, 0, audit.stderr);
  t.is(JSON.parse(audit.stdout).totals.receipts, FLOWS + 1);
  await svcd.stop();
});
