// VERIFY_RECEIPT through HTTP and svc/1 against a real svcd: a receipt is shown to the machine that
// paid for it, and to nobody else (another machine_id gets the same 404 as an unknown receipt id).
import test from 'ava';
import { httpFrom } from '../support/http-from.ts';
import { startSvcd } from '../support/start-svcd.ts';
import { fundMachine } from '../support/svcd.ts';

test('receipt guard: VERIFY_RECEIPT answers not_found for another machine\'s receipt', async (t) => {
  const s = await startSvcd(t);
  const token = await fundMachine(s, 'rc-owner', 1);
  const c = await s.edge();
  t.teardown(() => c.close());
  const q = await c.request('QUOTE', { service: 'submit-id', machine_id: 'rc-owner', bytes: 3 });
  await c.request('ACCEPT_QUOTE', { quote_id: q.quote_id, machine_id: 'rc-owner' }, { token });
  const r = await c.request('SUBMIT_ID', { quote_id: q.quote_id, machine_id: 'rc-owner', plain_hex: 'abcdef' },
    { token });
  const own = await c.request('VERIFY_RECEIPT', { receipt_id: r.receipt_id, machine_id: 'rc-owner' });
  t.deepEqual([own.valid, (own.receipt as { machine_id: string }).machine_id], [true, 'rc-owner']);
  const other = await t.throwsAsync(c.request('VERIFY_RECEIPT', { receipt_id: r.receipt_id, machine_id: 'rc-other' }));
  t.is((other as { code?: string }).code, 'not_found');
  const http = await httpFrom('127.0.0.1', s.ready.http!, 'POST', '/api/v1/receipts/verify',
    { receipt_id: r.receipt_id, machine_id: 'rc-other' });
  t.deepEqual([http.status, http.body.error.code, http.body.error.source], [404, 'not_found', 'svc']);
  t.false(JSON.stringify(http.body).includes('rc-owner'), 'nothing of the receipt leaks');
});
