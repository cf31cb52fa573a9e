// TRON addresses: 21 bytes, 0x41 then the 20-byte account an EVM would use, written base58check
// (`T…`, the checksum the first 4 bytes of sha256(sha256(bytes))). TRON's Ethereum-style JSON-RPC
// speaks the 20 bytes as 0x hex, so the TRON rail configures `T…` addresses and the EVM watcher
// works on their hex; deposits show the payer back in `T…` form. base58check: @scure/base.
import { createHash } from 'node:crypto';
import { createBase58check } from '@scure/base';

const sha256 = (b: Uint8Array): Uint8Array => createHash('sha256').update(b).digest();
const b58c = createBase58check(sha256);
const PREFIX = 0x41;
const HEX20 = /^0x[0-9a-fA-F]{40}$/;

/** `T…` → 0x + 40 hex (lower case); throws on a bad checksum, length or prefix. */
export function tronToHex(address: string): string {
  let raw: Uint8Array;
  try {
    raw = b58c.decode(address);
  } catch {
    throw new Error(`not a TRON address (base58check): ${JSON.stringify(address)}`);
  }
  if (raw.length !== 21 || raw[0] !== PREFIX) {
    throw new Error(`not a TRON address (21 bytes starting 0x41): ${JSON.stringify(address)}`);
  }
  return `0x${Buffer.from(raw.subarray(1)).toString('hex')}`;
}

/** 0x + 40 hex (or 41 + 40 hex, TRON's own hex form) → `T…`. */
export function hexToTron(hex: string): string {
  const h = /^41[0-9a-fA-F]{40}$/.test(hex) ? `0x${hex.slice(2)}` : hex;
  if (!HEX20.test(h)) throw new Error(`not a 20-byte hex address: ${JSON.stringify(hex)}`);
  const raw = new Uint8Array(21);
  raw[0] = PREFIX;
  raw.set(Buffer.from(h.slice(2), 'hex'), 1);
  return b58c.encode(raw);
}

export function isTronAddress(address: string): boolean {
  try { tronToHex(address); return true; } catch { return false; }
}
