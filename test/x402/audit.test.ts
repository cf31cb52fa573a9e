// The audit's x402 part (src/core/x402/audit.ts) on records made by hand: a settled or executed payment is
// credited exactly once with what it paid, a failed or pending one not at all, and no credit names a payment
// that does not exist.
import test from 'ava';
import { auditX402, type X402Credits } from '../../src/core/x402/audit.ts';
import type { PaymentState, X402Payment } from '../../src/core/x402/payments.ts';

const payment = (id: string, state: PaymentState, amount = '232'): X402Payment => ({
  payment_id: id, state, node_id: 'n', quote_id: `q-${id}`, machine_id: 'm', command: 'GET_PULSE',
  network: 'eip155:8453', asset: '0xa', pay_to: '0xb', payer: '0xc',
  authorization: { from: '0xc', to: '0xb', value: amount, validAfter: '0', validBefore: '9', nonce: '0x1' },
  signature: '0x', amount, units: (BigInt(amount) * 100n).toString(), from_block: 1, tx_hash: '0xt',
  block_number: 2, receipt_id: null, failure: null, created_at: '', updated_at: '',
});
const credit = (units: bigint, n = 1) => ({ units, n, where: 'm journal #1' });

test('x402 audit: each paid payment credited once with what it paid; nothing else credited', (t) => {
  const clean = auditX402([payment('a', 'executed'), payment('b', 'settled'), payment('c', 'failed')],
    new Map([['a', credit(23_200n)], ['b', credit(23_200n)]]) as X402Credits);
  t.deepEqual(clean.problems, []);
  t.deepEqual(clean.rows.map((r) => [r.state, r.count, r.amount]),
    [['executed', 1, '232'], ['failed', 1, '232'], ['settled', 1, '232']]);

  const never = auditX402([payment('a', 'settled')], new Map());
  t.deepEqual(never.problems, ['x402: a is settled but was never credited']);
  const twice = auditX402([payment('a', 'executed')], new Map([['a', credit(46_400n, 2)]]));
  t.deepEqual(twice.problems, ['x402: a was credited 2 times']);
  const more = auditX402([payment('a', 'executed')], new Map([['a', credit(23_300n)]]));
  t.deepEqual(more.problems, ['x402: a paid 232 (23200 units) but credited 23300']);
  const failed = auditX402([payment('a', 'failed')], new Map([['a', credit(23_200n)]]));
  t.deepEqual(failed.problems, ['x402: a is failed but was credited 23200 (m journal #1)']);
  const pending = auditX402([payment('a', 'submitted')], new Map([['a', credit(23_200n)]]));
  t.deepEqual(pending.problems, ['x402: a is submitted but was credited 23200 (m journal #1)']);
  const orphan = auditX402([], new Map([['z', credit(100n)]]));
  t.deepEqual(orphan.problems, ['x402: m journal #1 credits payment z, which does not exist']);
});
