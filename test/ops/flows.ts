// Paid flows for the operations tests: quote → accept → execute over svc/1 on a funded machine, each
// returning its receipt id. A small attest-event quote, so one funded svcC pays for many flows.
import type { SvcClient } from '../../src/client/client.ts';

export const QUOTE = { service: 'attest-event', bits: 64, bytes: 16 };

/** One paid flow; resolves with the receipt id once the execution is acknowledged (durable). */
export async function paidFlow(c: SvcClient, machine: string, token: string): Promise<string> {
  const auth = { token };
  const q = await c.request('QUOTE', { ...QUOTE, machine_id: machine });
  await c.request('ACCEPT_QUOTE', { quote_id: q.quote_id, machine_id: machine }, auth);
  const e = await c.request('ATTEST_EVENT', { quote_id: q.quote_id, machine_id: machine, plain_hex: '00' }, auth);
  return e.receipt_id as string;
}

/** Runs flows on `lanes` concurrent lanes until `stop()` says so; collects every acknowledged receipt. */
export function flowsUntil(
  c: SvcClient, machine: string, token: string, lanes: number, stop: () => boolean,
): { done: Promise<void>; receipts: string[]; errors: unknown[] } {
  const receipts: string[] = [];
  const errors: unknown[] = [];
  const lane = async () => {
    while (!stop()) {
      try { receipts.push(await paidFlow(c, machine, token)); } catch (e) { errors.push(e); return; }
    }
  };
  return { done: Promise.all(Array.from({ length: lanes }, lane)).then(() => undefined), receipts, errors };
}
