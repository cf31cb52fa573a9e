// The audit's x402 part (audit.ts): every payment settled or executed was credited exactly once, with what
// it paid; a payment failed or still on its way was credited nothing; no credit names a payment that does
// not exist. Totals by state and network, in token base units.
import { UNITS_PER_BASE_UNIT } from '../invoices.ts';
import type { X402Payment } from './payments.ts';

/** x402 payments by state and network: how many, and what they paid (token base units). */
export interface X402Row { state: string; network: string; count: number; amount: string }

/** The credits of the journal that name an x402 payment: units and how many, by payment id. */
export type X402Credits = Map<string, { units: bigint; n: number; where: string }>;


export function auditX402(
  payments: Iterable<X402Payment>, credits: X402Credits,
): { rows: X402Row[]; problems: string[] } {
  const problems: string[] = [];
  const by = new Map<string, { count: number; amount: bigint }>();
  const seen = new Set<string>();
  for (const p of payments) {
    seen.add(p.payment_id);
    const k = `${p.state}|${p.network}`;
    const b = by.get(k) ?? { count: 0, amount: 0n };
    by.set(k, { count: b.count + 1, amount: b.amount + BigInt(p.amount) });
    const c = credits.get(p.payment_id);
    const paid = p.state === 'settled' || p.state === 'executed';
    if (paid) {
      const due = BigInt(p.amount) * UNITS_PER_BASE_UNIT;
      if (!c) problems.push(`x402: ${p.payment_id} is ${p.state} but was never credited`);
      else if (c.n !== 1) problems.push(`x402: ${p.payment_id} was credited ${c.n} times`);
      else if (c.units !== due) {
        problems.push(`x402: ${p.payment_id} paid ${p.amount} (${due} units) but credited ${c.units}`);
      }
    } else if (c) {
      problems.push(`x402: ${p.payment_id} is ${p.state} but was credited ${c.units} (${c.where})`);
    }
  }
  for (const [id, c] of credits) {
    if (!seen.has(id)) problems.push(`x402: ${c.where} credits payment ${id}, which does not exist`);
  }
  const rows = [...by].map(([k, b]) => {
    const [state, network] = k.split('|') as [string, string];
    return { state, network, count: b.count, amount: b.amount.toString() };
  }).sort((a, b) => (a.state + a.network < b.state + b.network ? -1 : 1));
  return { rows, problems };
}
