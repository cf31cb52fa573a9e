// The transfers a watcher recorded, by transaction: (rail, transaction id, index) → deposit id, written
// with each deposit's first record. It turns a bare transaction id an operator types into the one
// transfer it names (or refuses it as ambiguous or unknown), so that every spelling of one payment is
// one reference (payment-reference.ts) before the one-reference-one-invoice check (invoices.ts).
import { ServiceError } from '../errors.ts';
import { key, numFromPart, numPart } from '../store/key-codec.ts';
import { batchWriter } from '../store/batch-writer.ts';
import { put, type Op, type Store } from '../store/store.ts';
import type { Rail } from './rails.ts';
import { formatReference, parseReference } from './payment-reference.ts';

type RailId = Rail['rail'];

/** The index entry of one recorded transfer, for its deposit's first batch. */
export function transferIndexOp(rail: RailId, tx: string, index: number, depositId: string): Op {
  return put('deposit_txs', key(rail, tx, numPart(index)), { deposit_id: depositId });
}

/** The recorded transfers of one transaction to the rail's address, in index order, with their deposits. */
export async function recordedTransfers(
  store: Store, rail: RailId, tx: string,
): Promise<{ index: number; deposit_id: string }[]> {
  const out: { index: number; deposit_id: string }[] = [];
  const prefix = key(rail, tx, '');
  for await (const [k, v] of store.entries('deposit_txs', { gte: prefix, lt: key(rail, tx, '\uffff') })) {
    out.push({ index: numFromPart(k.slice(prefix.length)), deposit_id: v.deposit_id as string });
  }
  return out;
}


/**
 * A reference as an operator wrote it → its canonical form (`<tx>:<index>`). A bare transaction id
 * stands for its only recorded transfer to the rail's address; none recorded, or several, is refused
 * with what to write instead.
 */
export async function resolveReference(store: Store, rail: RailId, text: string): Promise<string> {
  const ref = parseReference(rail, text);
  if (ref.index !== null) return formatReference(ref.tx, ref.index);
  const recorded = await recordedTransfers(store, rail, ref.tx);
  const found = recorded.map((r) => r.index);
  if (found.length === 1) return formatReference(ref.tx, found[0]!);
  const msg = found.length === 0
    ? `no transfer of transaction ${ref.tx} to the ${rail} address is recorded (yet): name the transfer as ` +
      `${ref.tx}:<index> (its log index, or on Solana its token account index)`
    : `transaction ${ref.tx} holds ${found.length} recorded transfers to the ${rail} address ` +
      `(indexes ${found.join(', ')}): name one as ${ref.tx}:<index>`;
  const deposits = recorded.map((r) => r.deposit_id);
  throw new ServiceError('invalid_request', msg, { field: 'reference', indexes: found, deposit_ids: deposits });
}

/** Indexes the deposits recorded before deposit_txs and deposit_reorgs existed (once per store; idempotent). */
export async function indexRecordedTransfers(store: Store): Promise<number> {
  if (await store.get('meta', 'deposit_txs_v1')) return 0;
  const out = batchWriter(store);
  let n = 0;
  for await (const [id, v] of store.entries('deposits')) {
    const tx = canonicalTx(v.rail as RailId, v.tx_id as string);
    await out.add(transferIndexOp(v.rail as RailId, tx, v.log_index as number, id));
    // a deposit marked reorged before the reorg index existed joins it
    if (typeof v.reorged_at === 'string') {
      await out.add(put('deposit_reorgs', key(v.rail as string, id), { deposit_id: id, reorged_at: v.reorged_at }));
    }
    n++;
  }
  await out.end(put('meta', 'deposit_txs_v1', { indexed: n }));
  return n;
}

/** A recorded transaction id in canonical form (as it was, when it is not one: a ledger's own oddity). */
function canonicalTx(rail: RailId, tx: string): string {
  try {
    return parseReference(rail, tx).tx;
  } catch {
    return tx;
  }
}
