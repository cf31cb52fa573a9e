// The recorded transfers by transaction (src/core/transfers.ts): a bare transaction id resolves to its only
// transfer or is refused naming what to write; a ledger from before the index is indexed once at open,
// its reorged deposits too. In process on a real store.
import test from 'ava';
import { listReorged, recordDeposit, type Deposit } from '../../src/core/deposits.ts';
import { indexRecordedTransfers, recordedTransfers, resolveReference } from '../../src/core/transfers.ts';
import { ServiceError } from '../../src/errors.ts';
import { put } from '../../src/store/store.ts';
import { coreFixture } from '../support/core-fixture.ts';
import { txId } from '../support/references.ts';
import type { Store } from '../../src/store/store.ts';

/** The indexes of the recorded transfers of one transaction, in order. */
const recordedIndexes = async (store: Store, rail: 'USDC_BASE' | 'USDT_TRON', tx: string) =>
  (await recordedTransfers(store, rail, tx)).map((r) => r.index);

const transfer = (seed: string, logIndex: number, amount = '5123456'): Deposit => ({
  rail: 'USDC_BASE', tx_id: txId(seed), log_index: logIndex, amount, from: '0xp', to: '0xr', block_number: 1,
  block_hash: `0x${'aa'.repeat(32)}`, confirmations: 1,
});

test('resolveReference: a bare id names its one transfer; none or several is refused with the indexes', async (t) => {
  const { ctx, store } = await coreFixture(t);
  const tx = txId('one');
  await recordDeposit(ctx, transfer('one', 7));
  t.is(await resolveReference(store, 'USDC_BASE', tx.toUpperCase().replace('0X', '0x')), `${tx}:7`);
  t.is(await resolveReference(store, 'USDC_BASE', `${tx}:9`), `${tx}:9`, 'an index given is taken as given');
  const none = await t.throwsAsync(resolveReference(store, 'USDC_BASE', txId('none')), { instanceOf: ServiceError });
  t.like(none, { code: 'invalid_request', details: { field: 'reference', indexes: [] } });
  t.regex(none!.message, new RegExp(`^no transfer of transaction ${txId('none')} to the USDC_BASE address is recorded `
    + '\\(yet\\): name the transfer as 0x[0-9a-f]{64}:<index>'));
  for (const i of [12, 2, 3]) await recordDeposit(ctx, transfer('many', i, String(6_000_000 + i)));
  t.deepEqual(await recordedIndexes(store, 'USDC_BASE', txId('many')), [2, 3, 12], 'in index order');
  t.deepEqual(await recordedIndexes(store, 'USDT_TRON', txId('many')), [], 'per rail');
  const many = await t.throwsAsync(resolveReference(store, 'USDC_BASE', txId('many')), { instanceOf: ServiceError });
  t.like(many, { code: 'invalid_request', details: { field: 'reference', indexes: [2, 3, 12] } });
  const ids = await Promise.all([2, 3, 12].map(async (i) => (await recordDeposit(ctx, transfer('many', i))).deposit));
  t.deepEqual((many as ServiceError).details!.deposit_ids, ids.map((d) => d.deposit_id), 'and their deposits');
  t.regex(many!.message, /holds 3 recorded transfers to the USDC_BASE address \(indexes 2, 3, 12\): name one as /);
});

test('indexRecordedTransfers: a ledger from before the index gets its transfers and reorgs indexed, once',
  async (t) => {
    const { ctx, store } = await coreFixture(t);
    const { deposit: { deposit_id: id } } = await recordDeposit(ctx, transfer('old', 4));
    const { deposit: plain } = await recordDeposit(ctx, transfer('plain', 1, '7123456'));
    // more than one write's worth of deposits from before the index (1,000 ops a batch), one with an id as
    // an older node stored it that is not a transaction id at all
    const legacy = Array.from({ length: 1001 }, (_, i) => put('deposits', `dep_legacy${i}`, {
      ...plain, deposit_id: `dep_legacy${i}`, tx_id: i === 0 ? 'legacy-tx' : txId(`legacy-${i}`), log_index: 0,
    }));
    await store.write(legacy);
    const keysOf = async (sub: 'deposit_txs' | 'deposit_reorgs'): Promise<string[]> => {
      const out: string[] = [];
      for await (const [k] of store.entries(sub)) out.push(k);
      return out;
    };
    const dep = (await store.get('deposits', id))!;
    // as an older node left it: a reorg mark, an upper-case id, and neither index nor marker
    await store.write([
      put('deposits', id, { ...dep, tx_id: String(dep.tx_id).toUpperCase().replace('0X', '0x'), reorged_at: 'then' }),
      { type: 'del', sub: 'deposit_txs', key: (await keysOf('deposit_txs'))[0]! },
      { type: 'del', sub: 'meta', key: 'deposit_txs_v1' },
    ]);
    t.deepEqual(await keysOf('deposit_reorgs'), []);
    t.is(await indexRecordedTransfers(store), 1003);
    t.deepEqual(await recordedIndexes(store, 'USDC_BASE', txId('old')), [4], 'under its canonical id');
    t.deepEqual(await recordedIndexes(store, 'USDC_BASE', 'legacy-tx'), [0], 'an odd id as it was');
    t.deepEqual(await recordedIndexes(store, 'USDC_BASE', txId('legacy-1000')), [0], 'past the first batch');
    t.is((await keysOf('deposit_reorgs')).length, 1, 'only the reorged one');
    t.deepEqual((await listReorged(ctx)).map((d) => d.deposit_id), [id], 'listed from the index');
    t.like(await store.get('meta', 'deposit_txs_v1'), { indexed: 1003 });
    t.is(await indexRecordedTransfers(store), 0, 'once');
  });
