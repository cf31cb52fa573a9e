// Solana SPL token deposits read from one transaction as getTransaction returns it (`json` encoding,
// any version): what arrived in each watched token account is its post − pre token balance for the
// rail's mint (the validator records both around execution), so every way of paying — Transfer,
// TransferChecked, a program's inner transfer, several in one transaction — counts, and only what
// actually landed. One deposit per (signature, account index) with a positive change; a failed
// transaction moves nothing and yields none. Talks to no chain: solana.ts feeds it.
import type { Rail } from '../rails.ts';
import type { Deposit } from '../deposits.ts';

/** The parts of a getTransaction result the parser reads (numbers may be bigint, as @solana/kit gives them). */
export interface SolanaTokenBalance {
  accountIndex: number;
  mint: string;
  owner?: string;
  uiTokenAmount: { amount: string; decimals: number };
}

export interface SolanaTransaction {
  slot: bigint | number;
  blockTime: bigint | number | null;
  meta: {
    err: unknown;
    preTokenBalances?: readonly SolanaTokenBalance[] | null;
    postTokenBalances?: readonly SolanaTokenBalance[] | null;
    loadedAddresses?: { writable: readonly string[]; readonly: readonly string[] } | null;
  } | null;
  transaction: {
    signatures: readonly string[];
    message: {
      accountKeys: readonly string[];
      header?: {
        numRequiredSignatures: number; numReadonlySignedAccounts: number; numReadonlyUnsignedAccounts: number;
      };
    };
  };
}

/**
 * The accounts of a transaction that may be a Solana Pay reference: read-only and not signing (a wallet adds the
 * reference so to the transfer), the loaded read-only ones included. Programs are among them; only an invoice's
 * reference matches one (deposit-match.ts).
 */
export function referenceCandidates(tx: SolanaTransaction): string[] {
  const { accountKeys, header } = tx.transaction.message;
  const readonlyUnsigned = header ? accountKeys.slice(accountKeys.length - header.numReadonlyUnsignedAccounts) : [];
  return [...readonlyUnsigned, ...(tx.meta?.loadedAddresses?.readonly ?? [])];
}

/**
 * The deposits one finalized transaction made into `accounts` (token accounts of the rail) in
 * `mint`. `log_index` is the account's index in the transaction's account list (static keys, then
 * loaded writable, then loaded read-only: the index token balances use); `from` is the owner of the
 * account whose balance in the mint fell most (the payer), when there is one.
 */
export function parseDeposits(
  tx: SolanaTransaction, rail: Rail['rail'], mint: string, accounts: ReadonlySet<string>, finalizedSlot: number,
): Deposit[] {
  const meta = tx.meta;
  if (!meta || meta.err !== null && meta.err !== undefined) return [];
  const keys = [
    ...tx.transaction.message.accountKeys, ...(meta.loadedAddresses?.writable ?? []),
    ...(meta.loadedAddresses?.readonly ?? []),
  ];
  const amounts = (list: readonly SolanaTokenBalance[] | null | undefined) => {
    const m = new Map<number, { amount: bigint; owner?: string }>();
    for (const b of list ?? []) {
      if (b.mint === mint) m.set(b.accountIndex, { amount: BigInt(b.uiTokenAmount.amount), owner: b.owner });
    }
    return m;
  };
  const pre = amounts(meta.preTokenBalances), post = amounts(meta.postTokenBalances);
  let payer: { owner?: string; fell: bigint } | undefined;
  for (const [i, before] of pre) {
    const fell = before.amount - (post.get(i)?.amount ?? 0n);
    if (fell > 0n && (!payer || fell > payer.fell)) payer = { owner: before.owner ?? keys[i], fell };
  }
  const slot = Number(tx.slot);
  const signature = tx.transaction.signatures[0]!;
  const out: Deposit[] = [];
  for (const [i, after] of [...post].sort((a, b) => a[0] - b[0])) {
    const to = keys[i];
    if (to === undefined || !accounts.has(to)) continue;
    const arrived = after.amount - (pre.get(i)?.amount ?? 0n);
    if (arrived <= 0n) continue;
    out.push({
      rail, tx_id: signature, log_index: i, amount: arrived.toString(), from: payer?.owner ?? '', to,
      block_number: slot, block_hash: '',
      ...(tx.blockTime !== null ? { block_time: new Date(Number(tx.blockTime) * 1000).toISOString() } : {}),
      confirmations: Math.max(1, finalizedSlot - slot + 1),
    });
  }
  return out;
}
