// x402 on Solana end to end (docs/x402.md "Solana"): the official client (@x402/fetch with @x402/svm's exact scheme,
// unmodified) pays for a GET_PULSE against svcd, whose fee payer co-signs and sends the payer's transaction to a
// cluster — litesvm running the real SPL Token program behind a JSON-RPC stand-in on loopback. Each payment lands
// at most once, executes once, and every test ends with a clean audit.
import test from 'ava';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import { verifyReceipt } from '../../src/kit/verify-api.ts';
import {
  NETWORK, PAYERS, auditClean, evmSettings, executePulse, payingFetch, pricedQuote, quotePulse, startChain,
} from './harness.ts';
import {
  HELD, SOLANA, paidQuote, solanaClient, solanaPayment, startSolana, startSolanaSvcd,
} from './solana-harness.ts';

test('solana: the official x402 client pays for a pulse; the fee payer co-signs; landed once; the receipt verifies',
  async (t) => {
    const w = await startSolana(t);
    const s = await startSolanaSvcd(t, w, { SVC_METRICS_PORT: '0' });
    const payer = await w.payer();
    const policy = await (await fetch(`${s.ready.http}/api/v1/payment`)).json() as { x402: Record<string, any> };
    t.deepEqual(policy.x402.networks, [{
      network: SOLANA, asset: w.chain.mint, pay_to: w.payee,
      settlement: { by: 'node fee payer', commitment: 'confirmed' },
    }]);
    const q = await quotePulse(s, 'sol-agent-1');
    const url = `${s.ready.http}/api/v1/executions/get-pulse`;
    const init = {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ machine_id: 'sol-agent-1', quote_id: q.quote_id }),
    };
    const unpaid = await fetch(url, init);
    t.is(unpaid.status, 402);
    const amount = BigInt(Math.ceil(q.quote_units / 100));
    t.like(decodePaymentRequiredHeader(unpaid.headers.get('payment-required')!).accepts[0], {
      scheme: 'exact', network: SOLANA, asset: w.chain.mint, amount: amount.toString(), payTo: w.payee,
      extra: { feePayer: w.feePayer, memo: q.quote_id, quote_id: q.quote_id },
    });

    const paid = await solanaClient(w, payer.signer).fetch(url, init);
    t.is(paid.status, 200, await paid.clone().text());
    const result = await paid.json() as Record<string, unknown> & { payment: Record<string, string> };
    const settled = decodePaymentResponseHeader(paid.headers.get('payment-response')!);
    t.like(settled, { success: true, network: SOLANA, payer: payer.signer.address });
    t.like(result.payment, { network: SOLANA, transaction: settled.transaction, amount: amount.toString() });
    t.is(w.rpc.executions(settled.transaction), 1);
    t.is(w.chain.tokenBalance(w.payeeAta), amount);
    t.is(w.chain.tokenBalance(payer.ata), HELD - amount);

    const rcpt = await (await fetch(`${s.ready.http}/api/v1/receipts/verify`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ machine_id: 'sol-agent-1', receipt_id: result.receipt_id }),
    })).json() as { receipt: { payment: Record<string, string> } };
    t.like(rcpt.receipt.payment, { transaction: settled.transaction, network: SOLANA });
    const keys = await (await fetch(`${s.ready.http}/.well-known/svc/nodes.json`)).json();
    t.true((await verifyReceipt(rcpt, keys as never)).valid);

    const metrics = await (await fetch(`http://${s.ready.metrics!}/metrics`)).text();
    const sol = Number(/^svc_x402_fee_payer_balance_sol (\S+)$/m.exec(metrics)?.[1]);
    t.true(sol > 9 && sol < 10, `fee payer balance ${sol}: it paid the fee`);
    const audit = await auditClean(t, s);
    t.deepEqual(audit.x402, [{ state: 'executed', network: SOLANA, count: 1, amount: amount.toString() }]);
  });

test('solana: the same payment again replays; twenty copies at once land and execute once', async (t) => {
  const w = await startSolana(t);
  const s = await startSolanaSvcd(t, w);
  const { q, req, header } = await paidQuote(w, s, 'sol-crowd');
  const answers = await Promise.all(Array.from({ length: 20 }, () =>
    executePulse(s, 'sol-crowd', q.quote_id, { 'payment-signature': header })));
  const bodies = await Promise.all(answers.map((r) => r.json() as Promise<Record<string, unknown>>));
  t.deepEqual(answers.map((r) => r.status), Array(20).fill(200), JSON.stringify(bodies.find((b) => !b.ok)));
  t.is(new Set(bodies.map((b) => b.receipt_id)).size, 1);
  t.is(bodies.filter((b) => !b.replayed).length, 1, 'one ran, nineteen replayed it');
  const again = await executePulse(s, 'sol-crowd', q.quote_id, { 'payment-signature': header });
  t.like(await again.json(), { replayed: true, receipt_id: bodies[0]!.receipt_id });
  const tx = (bodies[0]!.payment as { transaction: string }).transaction;
  t.is(w.rpc.executions(tx), 1);
  t.is(w.chain.tokenBalance(w.payeeAta), BigInt(req.amount));
  await auditClean(t, s);
});

test('solana: transactions that do not pay the quote are refused before signing, naming why; nothing moves',
  async (t) => {
    const w = await startSolana(t);
    const s = await startSolanaSvcd(t, w);
    const payer = await w.payer();
    const { scheme } = solanaClient(w, payer.signer);
    const { q, req } = await pricedQuote(s, 'sol-refused');
    const other = await quotePulse(s, 'sol-refused');
    const poor = solanaClient(w, (await w.chain.fundedWallet(0n)).signer).scheme;
    const cases: [string, Promise<string>, string][] = [
      ['one base unit short', solanaPayment(scheme, req, { amount: String(BigInt(req.amount) - 1n) }),
        'invalid_exact_svm_payload_amount_mismatch'],
      ['to another wallet', solanaPayment(scheme, req, { payTo: payer.signer.address }),
        'invalid_exact_svm_payload_recipient_mismatch'],
      ['signed for another quote (its memo)', solanaPayment(scheme, req, { extra: { memo: other.quote_id } }),
        'invalid_exact_svm_payload_memo_mismatch'],
      ['another fee payer', solanaPayment(scheme, req, { extra: { feePayer: payer.signer.address } }),
        'invalid_exact_svm_fee_payer_mismatch'],
      ['a payer without the tokens', solanaPayment(poor, req), 'invalid_exact_svm_transaction_simulation_failed'],
      ['not a transaction', Promise.resolve(Buffer.from(JSON.stringify({
        x402Version: 2, accepted: req, payload: { transaction: 'AAAA' },
      })).toString('base64')), 'invalid_exact_svm_payload_transaction_could_not_be_decoded'],
    ];
    for (const [what, header, reason] of cases) {
      const r = await executePulse(s, 'sol-refused', q.quote_id, { 'payment-signature': await header });
      t.is(r.status, 402, what);
      const body = await r.json() as { error: { code: string; details: { payment_required: { error: string } } } };
      t.is(body.error.code, 'payment_invalid', what);
      t.is(body.error.details.payment_required.error, reason, what);
    }
    t.is(w.rpc.sent.length, 0, 'nothing was sent');
    t.is(w.chain.tokenBalance(w.payeeAta), 0n);
    const audit = await auditClean(t, s);
    t.deepEqual(audit.x402, [], 'nothing recorded');
  });

test('solana: a transaction lost in flight is sent again; once its blockhash expires unseen it failed, unpaid',
  async (t) => {
    const w = await startSolana(t);
    const s = await startSolanaSvcd(t, w);
    const { payer, q, req, header } = await paidQuote(w, s, 'sol-lost');
    w.rpc.dropSends = true;
    const answer = executePulse(s, 'sol-lost', q.quote_id, { 'payment-signature': header });
    while (w.rpc.sent.length < 3) await new Promise((r) => setTimeout(r, 20));
    t.is(new Set(w.rpc.sent).size, 1, 'the same signed transaction each time');
    w.rpc.expireBlockhashes();
    const r = await answer;
    t.is(r.status, 402, await r.clone().text());
    t.like(await r.json(), { error: { code: 'payment_failed', details: { payment_required: {
      error: 'authorization_expired' } } } });
    t.is(w.rpc.executions(w.rpc.sent[0]!), 0);
    t.is(w.chain.tokenBalance(payer.ata), HELD);
    const audit = await auditClean(t, s);
    t.deepEqual(audit.x402, [{ state: 'failed', network: SOLANA, count: 1, amount: req.amount }]);
  });

test('solana: kill -9 with the transaction in flight, and after it was recorded but never left: landed once',
  async (t) => {
    const w = await startSolana(t);
    const s = await startSolanaSvcd(t, w);
    for (const [machine, how] of [['sol-held', 'held'], ['sol-unsent', 'dropped']] as const) {
      const { payer, q, req, header } = await paidQuote(w, s, machine);
      if (how === 'held') w.rpc.holdSends = true;
      else w.rpc.dropSends = true;
      const sentBefore = w.rpc.sent.length;
      const lost = executePulse(s, machine, q.quote_id, { 'payment-signature': header }).catch(() => null);
      while (w.rpc.sent.length === sentBefore) await new Promise((r) => setTimeout(r, 20));
      await s.kill9();
      await lost;
      const sig = w.rpc.sent.at(-1)!;
      t.is(w.rpc.executions(sig), 0, `${how}: not landed before the kill`);
      w.rpc.dropSends = false;
      if (how === 'held') {
        w.rpc.holdSends = false;
        await w.rpc.mineHeld();
      }
      await s.start(['start']);
      const retry = await executePulse(s, machine, q.quote_id, { 'payment-signature': header });
      t.is(retry.status, 200, `${how}: ${await retry.clone().text()}`);
      t.is(w.rpc.executions(sig), 1, `${how}: landed once`);
      t.is(w.chain.tokenBalance(payer.ata), HELD - BigInt(req.amount), how);
    }
    await auditClean(t, s);
  });

test('solana: not yet at the configured commitment: 409 payment_pending, then the result once it is', async (t) => {
  const w = await startSolana(t);
  w.rpc.autoConfirm = false;
  const s = await startSolanaSvcd(t, w, { SVC_X402_SOLANA_COMMITMENT: 'finalized', SVC_X402_MAX_TIMEOUT_S: '10' });
  const { q, header } = await paidQuote(w, s, 'sol-deep');
  const early = await executePulse(s, 'sol-deep', q.quote_id, { 'payment-signature': header });
  t.is(early.status, 409, await early.clone().text());
  t.like(await early.json(), { error: { code: 'payment_pending' } });
  w.rpc.confirmAll();
  const confirmed = await executePulse(s, 'sol-deep', q.quote_id, { 'payment-signature': header });
  t.is(confirmed.status, 409, 'confirmed is not finalized');
  w.rpc.finalizeAll();
  const done = await executePulse(s, 'sol-deep', q.quote_id, { 'payment-signature': header });
  t.is(done.status, 200, await done.clone().text());
  await auditClean(t, s);
});

test('solana: a transaction that lands failed (the payer moved the tokens first): 402 payment_failed, unpaid',
  async (t) => {
    const w = await startSolana(t);
    const s = await startSolanaSvcd(t, w);
    const { payer, q, header } = await paidQuote(w, s, 'sol-front');
    w.rpc.holdSends = true;
    const answer = executePulse(s, 'sol-front', q.quote_id, { 'payment-signature': header });
    while (w.rpc.held === 0) await new Promise((r) => setTimeout(r, 20));
    // the payer empties its token account ahead of the settlement
    await w.chain.execute([w.chain.transferIx(payer, w.payeeAta, HELD)], payer.signer);
    w.rpc.holdSends = false;
    await w.rpc.mineHeld();
    const r = await answer;
    t.is(r.status, 402, await r.clone().text());
    t.like(await r.json(), { error: { code: 'payment_failed', details: { payment_required: {
      error: 'settlement_reverted' } } } });
    const audit = await auditClean(t, s);
    t.is((audit.totals as { credited_units: string }).credited_units, '0');
  });

test('solana beside an EVM network: one 402 offers both; each client pays on its own network', async (t) => {
  const w = await startSolana(t);
  const evm = await startChain(t);
  // the EVM settings as the EVM tests give them, both networks offered
  const s = await startSolanaSvcd(t, w, (d) => ({ ...evmSettings(d, evm), SVC_X402_NETWORK: `${NETWORK},${SOLANA}` }));
  const { q } = await pricedQuote(s, 'two-nets');
  const unpaid = await executePulse(s, 'two-nets', q.quote_id);
  const accepts = decodePaymentRequiredHeader(unpaid.headers.get('payment-required')!).accepts;
  t.deepEqual(accepts.map((a) => a.network), [NETWORK, SOLANA]);
  t.like(accepts[0], { asset: evm.token.toLowerCase(), extra: { name: 'USD Coin', quote_id: q.quote_id } });
  t.like(accepts[1], { asset: w.chain.mint, extra: { feePayer: w.feePayer, quote_id: q.quote_id } });
  const url = `${s.ready.http}/api/v1/executions/get-pulse`;
  const init = (machine_id: string, quote_id: string) => ({
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ machine_id, quote_id }),
  });
  const bySol = await solanaClient(w, (await w.payer()).signer).fetch(url, init('two-nets', q.quote_id));
  t.is(bySol.status, 200, await bySol.clone().text());
  const q2 = await quotePulse(s, 'two-nets-evm');
  const byEvm = await payingFetch(evm, PAYERS[0]!)(url, init('two-nets-evm', q2.quote_id));
  t.is(byEvm.status, 200, await byEvm.clone().text());
  const audit = await auditClean(t, s);
  t.deepEqual((audit.x402 as { network: string }[]).map((r) => r.network).sort(), [NETWORK, SOLANA].sort());
});
