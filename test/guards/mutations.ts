// The guards on money, identity and proofs, each with one hand mutation that breaks it and the test
// that must then fail. test/support/probe-mutations.ts applies them one at a time; docs/testing.md
// carries the same table ("Guards and the tests that pin them").
export interface Mutation {
  id: string;
  guard: string;
  file: string;
  fn: string;
  /** text that occurs exactly once in `file`, and what it becomes */
  from: string;
  to: string;
  test: string;
  /** the ava title of the test that must fail */
  title: string;
}

const G = 'test/guards';
const PROOFS = `${G}/proofs.test.ts`, MONEY = `${G}/money.test.ts`, LEDGER = `${G}/ledger.test.ts`;
const RATE = `${G}/rate-limit.test.ts`, CODECS = `${G}/codecs.test.ts`;
const PATHS = 'test/watchers/settlement-paths.test.ts';
/** the offline verifiers (the embedding kit's; src/client/verify.ts only wraps them) */
const KIT = 'src/kit/verify.ts';

const T = {
  clusterState: 'npm run cluster: two nodes and two gateways on PostgreSQL; the README\'s HTTP tour on each gateway in '
    + 'turn, a machine\'s window and a client\'s sandbox quota exact across both, a paid flow; Ctrl-C stops all',
  clusterTls: 'a node on 127.0.0.2 serves cluster members only; the gateway checks the name; SIGHUP reloads',
  receipt: 'receipt guard: verifyReceipt refuses every tampered field, a foreign signature and a cut signature',
  keyWindow: 'receipt guard: across a key rotation a receipt verifies by the key it names, issued_at inside its '
    + 'window',
  ed: 'Ed25519 guard: verifyWithRawKey answers false (never throws) for a short key or a short signature',
  pulse: 'pulse guard: verifyPulse passes a real pair and names exactly the check each forgery breaks',
  tlog: 'tlog guard: verifyTlogProof checks the checkpoint signature itself (not its key hash), '
    + 'its origin, and inclusion under the signed size and root',
  window: 'rate-limit guard: a window resets exactly windowSec after it started, and not a millisecond before',
  limit: 'rate-limit guard: the limit is exact, a denial carries Retry-After, keys and classes count apart',
  open: 'rate-limit guard: assertOpen refuses a key at its limit without counting, and opens with the new window',
  evict: 'rate-limit guard: a full table drops expired windows first and keeps live ones',
  exhausted: 'rate-limit guard: a full table drops the windows with the fewest requests, never an exhausted one',
  reserved: 'ledger guard: verify() names a reserved balance that is not the sum of its journal',
  available: 'ledger guard: verify() names an available balance that is not the sum of its journal',
  negative: 'ledger guard: verify() names a negative balance even when the journal agrees with it',
  change: 'ledger guard: change() refuses a change that would make available or reserved negative',
  seq: 'ledger guard: verify() names a journal gap, an account seq that is not the journal\'s last, '
    + 'and journal entries without an account',
  snapshot: 'ledger guard: verify() reads the journal and the accounts from one snapshot, which it closes: a credit '
    + 'landing between its two scans is not a mismatch',
  settle: 'invoice guard: SETTLE_INVOICE takes an invoice until 1 ms before expires_ms, and refuses it from '
    + 'expires_ms on (invoice_expired)',
  late: 'invoice guard: CREDIT_LATE_PAYMENT refuses a pending invoice (invoice_not_expired) and takes it '
    + 'from expires_ms on, marking it settled_late',
  once: 'invoice guard: an invoice is credited exactly once; the same reference replays, another is '
    + 'invoice_already_settled',
  cap: 'invoice guard: a machine holds at most maxOpenInvoices pending invoices; they stop counting at '
    + 'their exact expiry',
  madeInTime: 'a payment made in time but final after expiry pays its invoice; the amount is not handed out '
    + 'meanwhile (LevelDB)',
  afterHold: 'a transfer recorded after its amount passed to a newer invoice pays the invoice it was made for; '
    + 'one older than both is queued before_invoice (LevelDB)',
  queueSays: 'the queue says what happened: a second payment, a hand-settled invoice, a near amount, an '
    + 'unknown one (LevelDB)',
  spelling: 'one payment credits one invoice in every spelling of its reference (LevelDB)',
  flood: '60 client addresses flooding invoices under fresh machine_ids leave fresh payers able to fund (LevelDB)',
  dismissed: 'a dismissed deposit leaves the queue for good: never claimed, never dismissed twice (LevelDB)',
  fundToken: 'invoice guard: a claimed machine needs its token for FUND_ACCOUNT (missing, wrong or rotated: '
    + 'unauthorized)',
  token: 'machine guard: checkToken refuses no record, no token, a wrong token, and takes only the current one',
  amounts: 'invoice guard: amounts are unique among a rail\'s invoices; an expired holder frees its amount once its '
    + 'hold has passed',
  quoteId: 'quote guard: quote ids are MAC\'d, bound to their machine and spelled one way only',
  acceptExpiry: 'quote guard: ACCEPT_QUOTE takes a quote until 1 ms before expires_ms and refuses it from '
    + 'expires_ms on (quote_expired)',
  legacyQuote: 'quote guard: a stored quote whose id carries no terms (stored before ids did) answers only its '
    + 'machine',
  acceptOnce: 'quote guard: a quote is accepted once (quote_not_issued), by its machine only, and only when '
    + 'available covers it (insufficient_balance)',
  priceBook: 'quote guard: a quote priced by another price book is expired, never honoured',
  execExpiry: 'execution guard: an accepted quote executes until 1 ms before expiry; from expires_ms on it is '
    + 'quote_expired and its reservation is released, uncharged',
  execState: 'execution guard: only an accepted quote of this service and machine runs; the input must fit '
    + 'the quote (input_mismatch)',
  execDigest: 'execution guard: a quote quoted with its input runs with that input only (digest)',
  execReplay: 'execution guard: an executed quote replays the same request and refuses another '
    + '(execution_mismatch); its receipt verifies and the capture is journaled once',
  lineComplete: 'line guard: a complete (newline-terminated) line longer than the limit is refused at the exact byte',
  keyCodec: 'key-codec guard: identifiers are hex-encoded, ill-formed UTF-16 is refused, numbers sort as numbers',
  resultTag: 'verify-result guard: a result tag is genuine only at its full length and exact bytes',
  idem: 'idempotency keys: same body replays, another body is 422',
  receiptMachine: 'receipt guard: VERIFY_RECEIPT answers not_found for another machine\'s receipt',
  jcs: 'canonical JSON: RFC 8785 reference vectors (cyberphone/json-canonicalization), byte for byte',
};

const m = (
  id: string, guard: string, file: string, fn: string, from: string, to: string, test: string, title: string,
): Mutation => ({ id, guard, file, fn, from, to, test, title });

export const MUTATIONS: Mutation[] = [
  // the first seven guards: proofs, windows, the ledger, invoices, lines
  m('receipt-signature', 'receipt signature check', 'src/core/receipts.ts', 'verifyReceipt',
    'if (!verifyWithRawKey(Buffer.from(key.public_key', 'if (false && verifyWithRawKey(Buffer.from(key.public_key',
    PROOFS, T.receipt),
  m('pulse-signature', 'pulse Ed25519 signature check', KIT, 'checkPulse',
    'await verifyEd25519(key!.raw, signed, sig)', 'true', PROOFS, T.pulse),
  m('tlog-key-hash-alone', 'tlog checkpoint signature (not just its key hash)', KIT, 'checkCheckpoint',
    'if (sig && await verifyEd25519(key.raw, utf8(parsed.text), sig.signature))', 'if (sig)', PROOFS, T.tlog),
  m('rate-window-reset', 'rate-limit window ends after windowSec', 'src/protocol/rate-limit.ts', 'RateLimiter.#window',
    'if (!w || nowMs - w.start >= this.#rules[klass].windowSec * 1000) {', 'if (!w) {', RATE, T.window),
  m('ledger-reserved-sum', 'ledger invariant: reserved = Σ journal', 'src/core/ledger.ts', 'Ledger.verify',
    'if (res !== s.r)', 'if (false)', LEDGER, T.reserved),
  m('invoice-expiry-settle', 'invoice expiry at settlement', 'src/core/invoices.ts', 'lateness',
    'if (mode === \'open\' && expired) {', 'if (false) {', MONEY, T.settle),
  m('line-limit-complete', 'limit on a complete svc/1 line', 'src/protocol/line-codec.ts', 'LineDecoder.nextLine',
    'if (this.#len + piece.length > this.#max)', 'if (nl < 0 && this.#len + piece.length > this.#max)',
    CODECS, T.lineComplete),
  // signatures and proofs
  m('receipt-key-id', 'receipt key id must name a key of the node\'s set', 'src/core/receipts.ts', 'verifyReceipt',
    'const key = keys?.find((k) => k.key_id === r.receipt.key_id);',
    'const key = keys?.find((k) => k.key_id === r.receipt.key_id) ?? keys?.at(-1);', PROOFS, T.receipt),
  m('receipt-key-window', 'a receipt\'s issued_at must lie in its key\'s window', 'src/core/receipts.ts',
    'verifyReceipt', 'if (!inWindow(key, r.receipt.issued_at))', 'if (false)', PROOFS, T.keyWindow),
  m('ed25519-lengths', 'raw-key Ed25519: key and signature lengths', 'src/protocol/ed25519.ts', 'verifyWithRawKey',
    'if (publicKeyRaw.length !== 32 || signature.length !== 64) return false;', '', PROOFS, T.ed),
  m('pulse-output-hash', 'pulse output_hash', KIT, 'checkPulse',
    'toHex(k.sha256(concat(signed, sig))) === p.output_hash', 'true', PROOFS, T.pulse),
  m('pulse-node-id', 'pulse node_id names the trusted node', KIT, 'checkPulse',
    't.nodeId === p.pulse.node_id || p.pulse.node_id === `svc-node-${t.keyId}`', 'true', PROOFS, T.pulse),
  m('pulse-result-index', 'pulse k is the result\'s pulse', KIT, 'verifyPulse',
    'r.pulse.index === prev.pulse.index', 'true', PROOFS, T.pulse),
  m('pulse-result-commit', 'pulse k is the result\'s pulse (commit)', KIT, 'verifyPulse',
    '&& r.pulse.commit === prev.pulse.commit', '', PROOFS, T.pulse),
  m('pulse-link', 'pulse k+1 links to pulse k', KIT, 'verifyPulse',
    '&& p.pulse.prev_output === prev.output_hash', '', PROOFS, T.pulse),
  m('pulse-next-index', 'pulse k+1 is the next index', KIT, 'verifyPulse',
    'p.pulse.index === prev.pulse.index + 1', 'true', PROOFS, T.pulse),
  m('pulse-reveal-index', 'pulse k+1 reveals seed k', KIT, 'verifyPulse',
    'p.pulse.revealed_index === prev.pulse.index', 'true', PROOFS, T.pulse),
  m('pulse-commit', 'SHA-256(revealed seed) = commit', KIT, 'verifyPulse',
    'toHex(k.sha256(seed)) === prev.pulse.commit', 'true', PROOFS, T.pulse),
  m('pulse-recompute', 'recomputed output = output_hex', KIT, 'verifyPulse',
    'const same = recomputed === r.output_hex;', 'const same = true;', PROOFS, T.pulse),
  m('tlog-origin', 'checkpoint origin is the expected log', KIT, 'checkCheckpoint',
    'cp.origin === origin', 'true', PROOFS, T.tlog),
  m('tlog-sig-name', 'checkpoint signature line names the origin', KIT, 'checkCheckpoint',
    's.name === cp.origin && equalBytes(s.keyHash, hash)', 'equalBytes(s.keyHash, hash)', PROOFS, T.tlog),
  m('tlog-inclusion', 'RFC 6962 inclusion', KIT, 'checkInclusion',
    'c.add(\'not_included\', name, v.ok,', 'c.add(\'not_included\', name, true,', PROOFS, T.tlog),
  m('tlog-size', 'inclusion under the signed size', KIT, 'checkInclusion',
    'proof.index, cp.size, proof.proof', 'proof.index, proof.index + 1n, proof.proof', PROOFS, T.tlog),
  m('result-tag-compare', 'result tag compared in full', 'src/core/executors/verify-result.ts', 'verifyResult',
    'wants.some((want) => got.length === want.length && timingSafeEqual(got, want));',
    'wants.some((want) => got.length === 0 || timingSafeEqual(got, want.subarray(0, got.length)));',
    CODECS, T.resultTag),
  m('result-tag-fields', 'result tag material must have every field', 'src/core/executors/verify-result.ts',
    'verifyResult', 'FIELDS.some((f) => typeof m![f] !== \'string\')', 'false', CODECS, T.resultTag),
  m('canonical-json', 'canonical JSON is RFC 8785', 'src/protocol/jcs.ts', 'composite',
    'const names = Object.keys(rec).sort();', 'const names = Object.keys(rec);',
    'test/oracles/canonical.test.ts', T.jcs),
  // rate limits
  m('rate-limit-exact', 'rate limit is exact', 'src/protocol/rate-limit.ts', 'RateLimiter.count',
    'allowed: w.count <= rule.limit,', 'allowed: w.count <= rule.limit + 1,', RATE, T.limit),
  m('rate-assert-open-window', 'assertOpen: window ends', 'src/protocol/rate-limit.ts', 'RateLimiter.assertOpen',
    'if (!w || nowMs - w.start >= rule.windowSec * 1000 || w.count < rule.limit) return;',
    'if (!w || w.count < rule.limit) return;', RATE, T.open),
  m('rate-evict-expired', 'a full table drops expired windows first', 'src/protocol/rate-limit.ts',
    'RateLimiter.#evict', 'if (nowMs - w.start >= rule.windowSec * 1000) this.#windows.delete(k);',
    'if (false) this.#windows.delete(k);', RATE, T.evict),
  m('rate-evict-exhausted', 'a full table never drops an exhausted window', 'src/protocol/rate-limit.ts',
    'RateLimiter.#evict', 'else if (w.count < rule.limit) open.push([k, w]);', 'else open.push([k, w]);', RATE,
    T.exhausted),
  // the ledger
  m('ledger-available-sum', 'ledger invariant: available = Σ journal', 'src/core/ledger.ts', 'Ledger.verify',
    'if (avail !== s.a)', 'if (false)', LEDGER, T.available),
  m('ledger-negative', 'ledger invariant: no negative balance', 'src/core/ledger.ts', 'Ledger.verify',
    'if (avail < 0n || res < 0n)', 'if (false)', LEDGER, T.negative),
  m('ledger-seq-gap', 'ledger invariant: journal without gaps', 'src/core/ledger.ts', 'Ledger.verify',
    'if (e.seq !== s.lastSeq + 1)', 'if (false)', LEDGER, T.seq),
  m('ledger-one-snapshot', 'ledger check reads one state', 'src/core/ledger.ts', 'Ledger.verify',
    'if (snapshot) return this.#verifyAt(snapshot);', 'if (true) return this.#verifyAt(snapshot);', LEDGER, T.snapshot),
  m('ledger-snapshot-closed', 'ledger check closes its snapshot', 'src/core/ledger.ts', 'Ledger.verify',
    'await own.close();', '', LEDGER, T.snapshot),
  m('ledger-change-negative', 'a change never goes negative', 'src/core/ledger.ts', 'Ledger.change',
    'if (next.available < 0n || next.reserved < 0n) {', 'if (next.available < 0n) {', LEDGER, T.change),
  // invoices and machines
  m('invoice-late-not-expired', 'late credit only for an expired invoice', 'src/core/invoices.ts', 'lateness',
    'if (mode === \'late\' && !expired) {', 'if (false) {', MONEY, T.late),
  m('invoice-expiry-boundary', 'invoice expires at expires_ms', 'src/core/invoices.ts', 'lateness',
    'now.getTime() >= inv.expires_ms', 'now.getTime() > inv.expires_ms', MONEY, T.settle),
  m('invoice-other-reference', 'a settled invoice refuses another reference', 'src/core/invoices.ts',
    'settledAlready', 'if (recorded !== null && canonicalOrAsIs(inv.rail, recorded) === reference) return inv;',
    'return inv;', MONEY, T.once),
  m('invoice-cap', 'open invoices are capped', 'src/core/invoices.ts', 'fundAccount',
    'if (Object.keys(open).length >= cap) {', 'if (Object.keys(open).length > cap) {', MONEY, T.cap),
  m('invoice-open-expiry', 'expired invoices leave the cap', 'src/core/invoices.ts', 'openInvoices',
    'filter(([, exp]) => exp > nowMs)', 'filter(() => true)', MONEY, T.cap),
  m('invoice-token', 'FUND_ACCOUNT on a claimed machine needs its token', 'src/core/invoices.ts', 'fundAccount',
    'if (rec) checkToken(rec, token);', '', MONEY, T.fundToken),
  m('machine-token-compare', 'token comparison', 'src/core/machines.ts', 'checkToken',
    'if (!rec || !token || !matches)', 'if (!rec || !token)', MONEY, T.token),
  m('machine-no-record', 'an unclaimed machine has no token', 'src/core/machines.ts', 'checkToken',
    'if (!rec || !token || !matches)', 'if (!token || (rec && !matches))', MONEY, T.token),
  m('invoice-amount-unique', 'amounts unique among invoices', 'src/core/invoices.ts', 'allocateAmount',
    'if (!taken || (taken.expires_ms as number) + holdMs(ctx) <= nowMs) return { amount, taken };',
    'return { amount, taken };', MONEY, T.amounts),
  m('invoice-amount-hold', 'an expired invoice keeps its amount through the hold', 'src/core/invoices.ts',
    'allocateAmount', '(taken.expires_ms as number) + holdMs(ctx) <= nowMs', '(taken.expires_ms as number) <= nowMs',
    PATHS, T.madeInTime),
  m('deposit-before-invoice', 'a transfer never pays an invoice opened after it', 'src/core/deposit-match.ts',
    'invoiceAt', 'paidMs >= createdMs(inv) - CLOCK_SKEW_MS', 'true', PATHS, T.afterHold),
  m('deposit-paid-in-time', 'a transfer made after expiry is late, not on time', 'src/core/deposit-match.ts', 'decide',
    'return paidMs < inv.expires_ms ?', 'return true ?', PATHS, T.afterHold),
  m('deposit-duplicate', 'a second payment of a settled invoice is queued', 'src/core/deposit-match.ts', 'decide',
    'if (inv.state === \'settled\') {', 'if (false) {', PATHS, T.queueSays),
  m('deposit-near-tolerance', 'another invoice is named only within the tolerance', 'src/core/deposit-match.ts',
    'nearby', 'if (gap * AMOUNT_TOLERANCE_DIVISOR > due) continue;', '', PATHS, T.queueSays),
  m('reference-canonical-tx', 'a transaction id has one spelling', 'src/core/payment-reference.ts', 'txOf',
    'return family === \'evm\' ? `0x${hex.toLowerCase()}` : hex.toLowerCase();', 'return tx;', PATHS, T.spelling),
  m('reference-canonical-index', 'an index has one spelling', 'src/core/payment-reference.ts', 'indexOf',
    '  return n;\n}', '  return index as unknown as number;\n}', PATHS, T.spelling),
  m('reference-bare-resolved', 'a bare transaction id names its only transfer', 'src/core/transfers.ts',
    'resolveReference', 'if (found.length === 1) return formatReference(ref.tx, found[0]!);',
    'if (found.length >= 1) return formatReference(ref.tx, found[0]!);', PATHS, T.spelling),
  m('invoice-client-cap', 'open invoices are capped per client address', 'src/core/invoice-clients.ts',
    'clientInvoiceOps', 'if (Object.keys(open).length >= cap) {', 'if (false) {', PATHS, T.flood),
  m('deposit-dismissed-final', 'a dismissed deposit is never claimed', 'src/core/deposits.ts', 'claimDeposit',
    '    if (dep.state !== \'unmatched\') throw notQueued(dep);\n    const inv', '    const inv', PATHS, T.dismissed),
  // quotes
  m('quote-tag', 'quote id MAC', 'src/core/quote-token.ts', 'decodeQuoteId',
    'if (!timingSafeEqual(raw.subarray(bodyLen), tag(key, body, machineId))) return',
    'if (false) return', MONEY, T.quoteId),
  m('quote-hint', 'quote id bound to its machine', 'src/core/quote-token.ts', 'decodeQuoteId',
    'if (!body.subarray(36, 42).equals(hint(machineId))) return', 'if (false) return', MONEY, T.quoteId),
  m('quote-spelling', 'one spelling per quote id', 'src/core/quote-token.ts', 'decodeQuoteId',
    'if (QUOTE_ID_PREFIX + raw.toString(\'base64url\') !== quoteId) return', 'if (false) return', MONEY, T.quoteId),
  m('quote-flags', 'quote id flags match its length', 'src/core/quote-token.ts', 'decodeQuoteId',
    '|| flags !== (bodyLen > BODY_BYTES ? 1 : 0)', '', MONEY, T.quoteId),
  m('quote-expiry-accept', 'quote expiry at accept', 'src/core/quotes.ts', 'acceptQuote',
    'if (isExpired(ctx, q)) throw await expiredQuote(ctx, q, stored);\n    // accepting',
    '// accepting', MONEY, T.acceptExpiry),
  m('quote-expiry-boundary', 'quotes expire at expires_ms', 'src/core/quotes.ts', 'isExpired',
    'ctx.now().getTime() >= q.expires_ms', 'ctx.now().getTime() > q.expires_ms', MONEY, T.execExpiry),
  m('quote-issued-only', 'a quote is accepted once', 'src/core/quotes.ts', 'acceptQuote',
    'if (q.state !== \'issued\') {', 'if (false) {', MONEY, T.acceptOnce),
  m('quote-balance', 'available must cover the quote', 'src/core/quotes.ts', 'acceptQuote',
    'if (acct.available < units) {', 'if (acct.available < units - 1n) {', MONEY, T.acceptOnce),
  m('quote-stored-machine', 'a stored quote belongs to its machine', 'src/core/quotes.ts', 'findQuote',
    'if (rec.machine_id !== machineId) throw wrongMachine();', 'if (false) throw wrongMachine();', MONEY,
    T.legacyQuote),
  m('quote-price-book', 'a quote from another price book is expired', 'src/core/quotes.ts', 'issuedRecord',
    'const stale = p.quote_units !== t.quote_units;', 'const stale = false;', MONEY, T.priceBook),
  // executions
  m('exec-expiry', 'quote expiry at execute', 'src/core/executions.ts', 'execute',
    'if (isExpired(ctx, q)) throw await expiredQuote(ctx, q, stored);', '', MONEY, T.execExpiry),
  m('exec-accepted', 'execution needs an accepted quote', 'src/core/executions.ts', 'execute',
    'if (q.state !== \'accepted\') throw', 'if (false) throw', MONEY, T.execState),
  m('exec-service', 'the quote is for this service', 'src/core/executions.ts', 'execute',
    'if (q.command !== command) {', 'if (false) {', MONEY, T.execState),
  m('exec-size', 'input within the quoted size', 'src/core/executions.ts', 'checkInput',
    '} else if (size > q.bytes) {', '} else if (false) {', MONEY, T.execState),
  m('exec-bits', 'bits within the quoted bits', 'src/core/executions.ts', 'checkInput',
    'if (a.bits !== undefined && a.bits > q.bits) {', 'if (false) {', MONEY, T.execState),
  m('exec-digest', 'input is the quoted input (digest)', 'src/core/executions.ts', 'checkInput',
    'if (sha256Hex(Buffer.from(a[q.input_field]!, \'hex\')) !== q.input_digest) {', 'if (false) {',
    MONEY, T.execDigest),
  m('exec-replay-digest', 'a replay must be the same request', 'src/core/executions.ts', 'execute',
    'if (done && done.request_digest === requestDigest) {', 'if (done) {', MONEY, T.execReplay),
  // codecs
  m('key-codec-surrogate', 'key codec refuses ill-formed UTF-16', 'src/store/key-codec.ts', 'wellFormed',
    'if (!isWellFormed(s)) {', 'if (false) {', CODECS, T.keyCodec),
  m('key-codec-range', 'key numbers are non-negative safe integers', 'src/store/key-codec.ts', 'numPart',
    'if (!Number.isSafeInteger(n) || n < 0) throw', 'if (false) throw', CODECS, T.keyCodec),
  // inputs and shared budgets
  m('budget-address-share', 'one client address holds at most its share of a byte budget',
    'src/protocol/budgets.ts', 'Share.tryTake', 'if (now + n > this.#of.perAddress) {', 'if (false) {',
    'test/protocol/budgets.test.ts',
    'AddressedBudget: one address holds at most its share, over any number of readers; others go on'),
  m('sealed-low-order', 'a low-order X25519 recipient is invalid_request', 'src/core/executors/sealed-message.ts',
    'hpkeSeal', 'if (!(e instanceof EncapError)) throw e;', 'throw e;', 'test/core/hpke.test.ts',
    'HPKE seal to a low-order X25519 key: invalid_request on packet_hex, never an internal error'),
  m('rfc3339-day', 'an RFC 3339 date must exist (no 30th of February)', 'src/protocol/rfc3339.ts',
    'rfc3339Nanos', 'if (day > (month === 2 && leap(year) ? 29 : MONTH_DAYS[month - 1]!)) return null;', '',
    'test/core/event-summary.test.ts', 'times that do not exist are invalid_request naming the field'),
  m('settle-reference-once', 'one payment reference credits one invoice', 'src/core/invoices.ts',
    'settleInvoice', 'if (other) throw referenceUsed(reference, other);', '',
    'test/core/settlement-references.test.ts',
    'a reference that settled one invoice is refused for another, by settle and by the late path'),
  // the core's gate, idempotency and handlers
  m('idempotency-digest', 'idempotency: another body is 422', 'src/core/keyed-requests.ts', 'KeyedRequests.run',
    'if (prior.digest !== digest) {', 'if (false) {', 'test/core/flow.test.ts', T.idem),
  m('receipt-machine', 'a receipt is shown to its machine only', 'src/core/commands/proofs.ts', 'receipt',
    'if (!r || r.receipt.machine_id !== machineId) {', 'if (!r) {', 'test/errors/receipts.test.ts',
    T.receiptMachine),
  m('gate-admin-listener', 'admin commands only on the admin socket', 'src/core/gate.ts', 'checkListener',
    "if (spec.auth === 'admin' && listener !== 'admin') {", 'if (false) {', 'test/core/edge.test.ts',
    'admin commands: refused on the edge and the backend, served only on the admin socket (mode 0600)'),
  m('lock-order', 'locks are taken in one order', 'src/core/lock-order.ts', 'checkOrder',
    'if (outer === null || LOCK_ORDER.indexOf(outer.kind) < LOCK_ORDER.indexOf(kind)) return;', 'return;',
    'test/core/lock-order.test.ts', 'a lock taken under a later one, or under its own kind, is refused naming both'),
  m('needs-token', 'machine_context commands need the token', 'src/protocol/registry.ts', 'needsToken',
    "return spec.auth === 'machine_context' || spec.auth === 'required';", "return spec.auth === 'required';",
    'test/adversarial/auth-matrix.test.ts',
    'authenticated commands refuse no, wrong and borrowed tokens on both surfaces; victim untouched'),
  // the backend across hosts: only cluster members, and off loopback only with mutual TLS
  m('backend-client-cert', 'backend peers prove a cluster certificate', 'src/edge/servers.ts', 'backendServer',
    'requestCert: true, rejectUnauthorized: true,', 'requestCert: false, rejectUnauthorized: false,',
    'test/cluster/backend-tls.test.ts', T.clusterTls),
  m('backend-loopback', 'a plain backend listens on loopback only', 'src/core/config.ts', 'loadConfig',
    "if (backendHost !== '127.0.0.1' && !clusterTls) {", 'if (false) {',
    'test/cluster/backend-tls.test.ts',
    'the backend leaves 127.0.0.1 only with mutual TLS, and a wrong pair of files stops the start'),
  m('affinity-machine', 'a machine\'s calls meet its window on one node', 'src/gateway/core-nodes.ts', 'affinityKey',
    "if (needsToken(spec) && typeof args.machine_id === 'string') return `m:${args.machine_id}`;", '',
    'test/cluster/cluster-script.test.ts', T.clusterState),
  m('affinity-sandbox', 'a client\'s sandbox lives on one node', 'src/gateway/core-nodes.ts', 'affinityKey',
    "if (spec.billing === 'sandbox_free_limited') return addressWindowKey(client);", '',
    'test/cluster/cluster-script.test.ts', T.clusterState),
];

