// Payment references of the chain rails, in one spelling: one on-chain transfer is one reference, so
// that "one reference credits one invoice" holds however an operator types it. A reference names a
// transfer as `<transaction id>:<index>` (EVM and TRON: the log index in its block; Solana: the token
// account's index in its transaction); a bare transaction id is resolved by the caller to its only
// recorded transfer. Canonical forms: Base `0x` + 64 lower-case hex, TRON 64 lower-case hex (as
// Tronscan writes it), Solana the base58 signature as written (case-sensitive), the index in decimal.
// Pure: no store, no chain.
import { base58 } from '@scure/base';
import { ServiceError } from '../errors.ts';
import { RAIL_FAMILY, type Rail } from './rails.ts';

/** A transfer as a reference names it; `index` null: a bare transaction id, to be resolved. */
export interface TransferRef { tx: string; index: number | null }

type RailId = Rail['rail'];
type Family = (typeof RAIL_FAMILY)[RailId];

/** The largest index a reference may name (log indexes and account indexes are far below it). */
const MAX_INDEX = 1_000_000_000;
const HEX_TX = /^(?:0x)?([0-9a-f]{64})$/i;
const INDEX = /^(?:\d{1,12}|0x[0-9a-f]{1,8})$/i;

const FORMS: Record<Family, string> = {
  evm: '0x + 64 hex digits, then :<log index> (e.g. 0x5c50…e1a2:3)',
  tron: '64 hex digits (the transaction id Tronscan shows), then :<log index>',
  solana: 'the base58 transaction signature, then :<token account index>',
};

function refused(rail: RailId, text: string, why: string): ServiceError {
  const form = FORMS[RAIL_FAMILY[rail]];
  const msg = `reference ${JSON.stringify(text)} is not a transfer on ${rail}: ${why}; write ${form}`;
  return new ServiceError('invalid_request', msg, { field: 'reference' });
}

function txOf(rail: RailId, text: string, tx: string): string {
  const family = RAIL_FAMILY[rail];
  if (family === 'solana') {
    let bytes: Uint8Array | null = null;
    try { bytes = base58.decode(tx); } catch { /* refused below */ }
    if (bytes?.length !== 64) throw refused(rail, text, 'the signature is not 64 bytes of base58');
    return tx;
  }
  const hex = HEX_TX.exec(tx)?.[1];
  if (hex === undefined) throw refused(rail, text, 'the transaction id is not 32 bytes of hex');
  return family === 'evm' ? `0x${hex.toLowerCase()}` : hex.toLowerCase();
}

function indexOf(rail: RailId, text: string, index: string): number {
  if (!INDEX.test(index)) throw refused(rail, text, `the index ${JSON.stringify(index)} is not a number`);
  const n = Number(index);
  if (n > MAX_INDEX) throw refused(rail, text, `the index ${index} is out of range`);
  return n;
}

/**
 * A reference as written → the transfer it names, in canonical form. Refuses (invalid_request) what is
 * not a transfer of the rail's chain: any text that only looks like one would be a second spelling.
 */
export function parseReference(rail: RailId, text: string): TransferRef {
  const at = text.lastIndexOf(':');
  const txText = at < 0 ? text : text.slice(0, at);
  return { tx: txOf(rail, text, txText), index: at < 0 ? null : indexOf(rail, text, text.slice(at + 1)) };
}

/** The canonical reference of a transfer (index known). */
export const formatReference = (tx: string, index: number): string => `${tx}:${index}`;

/**
 * A stored reference's canonical key, for references written before canonical spelling (a ledger's
 * own history): its canonical form when it parses as a transfer, else the text as it was.
 */
export function canonicalOrAsIs(rail: RailId, text: string): string {
  try {
    const r = parseReference(rail, text);
    return r.index === null ? r.tx : formatReference(r.tx, r.index);
  } catch {
    return text;
  }
}
