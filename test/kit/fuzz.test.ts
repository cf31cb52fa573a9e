// The kit's verifiers on mutated real material: a node's own core, in process and on a clock the test
// holds, makes receipts, pulses, timestamp proofs and the other signed results; a seeded PRNG
// (test/support/json-mutations.ts) makes 1,000 mutations each of a receipt, a pulse pair with its
// GET_PULSE result, a single pulse and a timestamp proof, and fewer of the rest. Every verifier answers
// every one with a well-formed verdict and never throws; none calls valid what a mutation altered of the
// content it vouches for (the RULES below, as docs/embedding.md states them), and what it does not
// vouch for (the execution's receipt facts, the node's own opinions) leaves a valid verdict valid.
import test, { type ExecutionContext } from 'ava';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { prng, type Prng } from '../helpers.ts';
import { ManualClock, fundCore, openCore } from '../support/core-fixture.ts';
import { changeOf, mutate, oddValue, plainJson, type Path, type Rule } from '../support/json-mutations.ts';
import { loadKernels } from '../../src/kit/kernels.ts';
import {
  openSealedMessage, verifyAttestation, verifyLogConsistency, verifyLogInclusion, verifyMachineEventLog,
  verifyPulse, verifyReceipt, verifyTimestampProof, type Verdict,
} from '../../src/kit/verify-api.ts';

const M = 'm-fuzz';
const PERIOD = 3_600_000;
type Doc = Record<string, any>;
const art: Record<string, any> = {};

test.before(async () => {
  // hooks have no t.teardown: the core and its temp dir go as soon as the material is made
  const teardowns: (() => unknown)[] = [];
  try {
    await makeMaterial({ teardown: (fn: () => unknown) => { teardowns.unshift(fn); } } as unknown as ExecutionContext);
  } finally {
    for (const fn of teardowns) await fn();
  }
});

async function makeMaterial(t: ExecutionContext): Promise<void> {
  const clock = new ManualClock();
  const core = await openCore(t, { SVC_PULSE_PERIOD_MS: String(PERIOD) }, { clock });
  const token = await fundCore(core, M, 20);
  const call = (cmd: string, args: Doc, auth?: { token: string }) =>
    core.handle(cmd, args, auth as never, 'gateway').then((r) => JSON.parse(JSON.stringify(r)) as Doc);
  const paid = async (service: string, cmd: string, quote: Doc, exec: Doc = {}) => {
    const q = await call('QUOTE', { service, machine_id: M, ...quote });
    await call('ACCEPT_QUOTE', { quote_id: q.quote_id, machine_id: M }, { token });
    return call(cmd, { quote_id: q.quote_id, machine_id: M, ...exec }, { token });
  };
  const pulses = [await paid('get-pulse', 'GET_PULSE', { bits: 256 }),
    await paid('get-pulse', 'GET_PULSE', { bits: 1001 })];
  art.receipts = await Promise.all(pulses.map((ex) =>
    call('VERIFY_RECEIPT', { receipt_id: ex.receipt_id, machine_id: M })));
  art.result = { ...pulses[1], machine_id: M };
  const k = (art.result.pulse as Doc).index as number;
  clock.advance(PERIOD);
  await core.ctx.chain.emit();
  art.committed = await call('PULSE', { index: k });
  art.revealing = await call('PULSE', { index: k + 1 });
  art.digests = [0, 1, 2, 3, 4].map((i) => createHash('sha256').update(`doc ${i}`).digest());
  art.timestamps = [];
  for (const d of art.digests) {
    art.timestamps.push(await paid('timestamp-proof', 'TIMESTAMP_PROOF', { bytes: 32 },
      { plain_hex: d.toString('hex') }));
  }
  const summary = Buffer.from(JSON.stringify({ count: 3, head_hash: 'cd'.repeat(32), from: '2026-11-22T00:00:00Z',
    to: '2026-11-22T01:00:00Z' }));
  art.events = await paid('machine-event-log', 'MACHINE_EVENT_LOG', { bytes: summary.length },
    { plain_hex: summary.toString('hex') });
  art.event = Buffer.from('door opened');
  art.attestation = await paid('attest-event', 'ATTEST_EVENT', { bytes: art.event.length },
    { plain_hex: art.event.toString('hex') });
  const { publicKey, privateKey } = generateKeyPairSync('x25519');
  art.recipient = new Uint8Array(privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(-32));
  art.sealed = await paid('sealed-message', 'SEALED_MESSAGE', { bytes: 48 }, { plain_hex: 'ab'.repeat(16),
    packet_hex: publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('hex') });
  // the key set as nodes.json publishes it: windows stated, so the windows the material claims are checked
  const id = core.ctx.identity;
  art.nodes = { nodes: [{ node_id: id.nodeId, key_id: id.keyId, public_key: id.public.public_key,
    keys: id.publishedKeys() }] };
  const kernels = await loadKernels();
  const leaves = art.timestamps.map((r: Doc) => kernels.merkleLeafHash(Buffer.from(r.log.entry_base64, 'base64')));
  art.consistency = { old: art.timestamps[1].log.checkpoint, new: art.timestamps[4].log.checkpoint,
    proof: kernels.consistencyProof(leaves, 2).map((h) => Buffer.from(h).toString('base64')) };
}

const at = (prefix: Path, ...paths: Path[]) => paths.map((p) => [...prefix, ...p]);
const req = (...paths: Path[]): Rule[] => paths.map((path) => ({ path, required: true }));
const opt = (...paths: Path[]): Rule[] => paths.map((path) => ({ path }));
const LOG_FIELDS = ['origin', 'leaf_index', 'tree_size', 'leaf_hash', 'root', 'inclusion_proof', 'checkpoint',
  'public_key', 'key_id'].map((f) => ['log', f]);
/** A pulse's vouched content; `windows`: whether the trusted keys state windows to hold node_keys' to. */
const pulseRules = (p: Path, windows: boolean): Rule[] => [
  ...req(...at(p, ['pulse'], ['signature'], ['output_hash'])),
  ...opt(...at(p, ['public_key'], ...['public_key', 'key_id', 'alg', ...(windows ? ['valid_from', 'valid_until'] : [])]
    .map((f) => ['node_keys', '*', f]))),
];

// What each verifier vouches for; everything else may change without changing the verdict: the
// execution's receipt facts beside a paid result (service, command, quote_id, machine_id, units_charged,
// receipt_id, result_tag, status, input and output digests: verifyReceipt on its receipt vouches for
// them), the node's own opinions (`valid`, `reason`, `signed_bytes`, node_keys' `status`), and members
// nobody defined.
const RULES = {
  receipt: [...req(['receipt'], ['signature']),
    ...opt(['receipt_id'], ['key_id'], ['public_key'], ['alg'], ['key_valid_from'], ['key_valid_until'])],
  pair: [...pulseRules(['pulse'], true), ...pulseRules(['previous'], true),
    ...req(...at(['result'], ['quote_id'], ['machine_id'], ['bits'], ['output_hex'], ['pulse', 'chain_id'],
      ['pulse', 'index'], ['pulse', 'commit'])),
    ...opt(['result', 'pulse', 'period_ms'], ['result', 'pulse', 'revealed_by_index'])],
  pulse: pulseRules([], true),
  ownKeyPulse: pulseRules([], false),
  timestamp: [...req(['token'], ['token_signature'], ['tlog_proof'], ['log', 'entry_base64']), ...opt(...LOG_FIELDS)],
  events: [...req(['tlog_proof'], ['log', 'entry_base64']), ...opt(['entry'], ...LOG_FIELDS)],
  attestation: [...req(['envelope', 'payloadType'], ['envelope', 'payload'], ['envelope', 'signatures', 0, 'keyid'],
    ['envelope', 'signatures', 0, 'sig']), ...opt(['statement'], ['public_key'])],
  sealed: [...req(['enc_hex'], ['ciphertext_hex']), ...opt(['info_hex'], ['aad_hex'],
    ...['kem_id', 'kdf_id', 'aead_id', 'mode', 'kem', 'kdf', 'aead'].map((f) => ['suite', f]))],
  inclusion: req(['proof'], ['entry']),
  consistency: req(['old'], ['new'], ['proof']),
} satisfies Record<string, Rule[]>;

interface Tally {
  runs: number; throws: number; altered: number; alteredValid: number; same: number; sameInvalid: number;
}
const tally = (): Tally => ({ runs: 0, throws: 0, altered: 0, alteredValid: 0, same: 0, sameInvalid: 0 });

/** A verdict as docs/embedding.md shapes it: valid exactly when every listed check passed, a reason when not. */
function wellFormed(v: Verdict): boolean {
  return typeof v.valid === 'boolean' && Array.isArray(v.checks) && v.checks.length > 0
    && v.checks.every((c) => typeof c.name === 'string' && typeof c.ok === 'boolean'
      && (c.detail === undefined || typeof c.detail === 'string'))
    && v.valid === v.checks.every((c) => c.ok) && (v.valid ? v.reason === null : typeof v.reason === 'string');
}

/**
 * `n` mutations of `doc` through `verify`: counts throws, and valid verdicts for altered content and
 * invalid ones for content that reads the same; the first few of each are logged with their edits.
 */
async function campaign(
  t: ExecutionContext, name: string, seed: number, n: number, doc: Doc, rules: Rule[],
  verify: (d: any) => Promise<Verdict>, opts: { siblings?: Doc[]; avoid?: Path[] } = {},
): Promise<Tally> {
  const r = prng(seed);
  const c = tally();
  const original = await verify(doc);
  t.true(original.valid, `${name}: the real material verifies: ${JSON.stringify(original.checks)}`);
  const shown: string[] = [];
  for (let i = 0; i < n; i++) {
    const m = mutate(r, doc, opts.siblings ?? [], opts.avoid ?? []);
    const change = changeOf(doc, m.doc, rules);
    c.runs++;
    let v: Verdict;
    try {
      v = await verify(m.doc);
    } catch (e) {
      c.throws++;
      if (shown.length < 5) shown.push(`#${i} threw ${String(e)}: ${m.what.join('; ')}`);
      continue;
    }
    if (!wellFormed(v) && shown.length < 5) shown.push(`#${i} ill-formed verdict ${JSON.stringify(v)}`);
    t.true(wellFormed(v), `${name} #${i}`);
    if (change === 'altered') {
      c.altered++;
      if (v.valid) {
        c.alteredValid++;
        if (shown.length < 5) shown.push(`#${i} valid though altered: ${m.what.join('; ')}`);
      }
    } else if (change === 'same' && plainJson(m.doc)) {
      c.same++;
      if (!v.valid) {
        c.sameInvalid++;
        if (shown.length < 5) shown.push(`#${i} invalid though unchanged (${v.reason}): ${m.what.join('; ')}`);
      }
    }
  }
  t.log(`${name}: ${JSON.stringify(c)}`);
  for (const s of shown) t.log(`${name} ${s}`);
  return c;
}

const pass = (t: ExecutionContext, name: string, c: Tally, n: number) => {
  t.is(c.runs, n, name);
  t.is(c.throws, 0, `${name}: throws`);
  t.is(c.alteredValid, 0, `${name}: valid verdicts for altered content`);
  t.is(c.sameInvalid, 0, `${name}: invalid verdicts for content that reads the same`);
  t.true(c.altered > n / 3, `${name}: a third or more of the mutations alter vouched content (${c.altered})`);
};

test('1,000 mutated receipts: no throw, no valid verdict for altered content', async (t) => {
  const [r, other] = art.receipts as Doc[];
  const c = await campaign(t, 'receipt', 0x5eed01, 1000, r!, RULES.receipt, (d) => verifyReceipt(d, art.nodes),
    { siblings: [other!] });
  pass(t, 'receipt', c, 1000);
});

test('1,000 mutated pulse pairs with their GET_PULSE result, 1,000 single pulses: no throw, no valid forgery',
  async (t) => {
    const pair = { pulse: art.revealing, previous: art.committed, result: art.result };
    const c = await campaign(t, 'pulse pair', 0x5eed02, 1000, pair, RULES.pair,
      (d) => verifyPulse(d.pulse, d.previous, { nodeKeys: art.nodes, result: d.result }),
      { siblings: [{ pulse: art.committed, previous: art.revealing, result: art.result }],
        avoid: [['pulse'], ['previous'], ['result']] });
    pass(t, 'pulse pair', c, 1000);
    const single = await campaign(t, 'pulse', 0x5eed03, 700, art.revealing, RULES.pulse,
      (d) => verifyPulse(d, undefined, { nodeKeys: art.nodes }), { siblings: [art.committed] });
    pass(t, 'pulse', single, 700);
    // trusting the pulse's own public_key (a bare key: no window to hold node_keys' windows to)
    const own = await campaign(t, 'pulse by its own key', 0x5eed04, 300, art.revealing, RULES.ownKeyPulse,
      (d) => verifyPulse(d), { siblings: [art.committed] });
    pass(t, 'pulse by its own key', own, 300);
  });

test('1,000 mutated timestamp proofs: no throw, no valid verdict for altered content', async (t) => {
  const [a, b, c2, d, last] = art.timestamps as Doc[];
  const c = await campaign(t, 'timestamp', 0x5eed05, 1000, last!, RULES.timestamp,
    (x) => verifyTimestampProof(x, art.nodes, { digest: art.digests[4] }), { siblings: [a!, b!, c2!, d!] });
  pass(t, 'timestamp', c, 1000);
});

test('the other verifiers on mutated material: event logs, attestations, sealed messages, inclusion and '
  + 'consistency proofs', async (t) => {
  const runs: [string, number, Doc, Rule[], (d: any) => Promise<Verdict>, Path[]?][] = [
    ['machine event log', 0x5eed06, art.events, RULES.events, (d) => verifyMachineEventLog(d, art.nodes)],
    ['attestation', 0x5eed07, art.attestation, RULES.attestation,
      (d) => verifyAttestation(d, art.nodes, { event: art.event })],
    ['sealed message', 0x5eed08, art.sealed, RULES.sealed, (d) => openSealedMessage(d, art.recipient)],
    ['log inclusion', 0x5eed09, { proof: art.events.tlog_proof, origin: art.events.log.origin,
      entry: new Uint8Array(Buffer.from(art.events.log.entry_base64, 'base64')) }, RULES.inclusion,
    (d) => verifyLogInclusion(d.proof, d.entry, art.nodes, { origin: d.origin }), [['origin']]],
    ['log consistency', 0x5eed0a, art.consistency, RULES.consistency,
      (d) => verifyLogConsistency(d.old, d.new, d.proof, art.nodes)],
  ];
  for (const [name, seed, doc, rules, verify, avoid] of runs) {
    pass(t, name, await campaign(t, name, seed, 400, doc, rules, verify, { avoid: avoid ?? [] }), 400);
  }
});

test('every verifier, each argument replaced by odd values (keys and options too): a verdict, never a throw',
  async (t) => {
    const r: Prng = prng(0x5eed0b);
    const ts = art.timestamps[4] as Doc;
    const entry = new Uint8Array(Buffer.from(ts.log.entry_base64, 'base64'));
    const calls: [string, unknown[], (...a: any[]) => Promise<Verdict>][] = [
      ['verifyReceipt', [art.receipts[0], art.nodes, {}], verifyReceipt],
      ['verifyPulse', [art.revealing, art.committed, { nodeKeys: art.nodes, result: art.result }], verifyPulse],
      ['verifyTimestampProof', [ts, art.nodes, { digest: art.digests[4] }], verifyTimestampProof],
      ['verifyMachineEventLog', [art.events, art.nodes, {}], verifyMachineEventLog],
      ['verifyLogInclusion', [ts.tlog_proof, entry, art.nodes, { origin: ts.log.origin }], verifyLogInclusion],
      ['verifyLogConsistency', [art.consistency.old, art.consistency.new, art.consistency.proof, art.nodes, {}],
        verifyLogConsistency],
      ['verifyAttestation', [art.attestation, art.nodes, { event: art.event }], verifyAttestation],
      ['openSealedMessage', [art.sealed, art.recipient, {}], openSealedMessage],
    ];
    let throws = 0, total = 0;
    for (const [name, args, fn] of calls) {
      t.true((await fn(...args)).valid, `${name}: as made`);
      for (let pos = 0; pos < args.length; pos++) {
        for (let i = 0; i < 40; i++) {
          const odd = [...args];
          // the options replaced whole, or one of their members
          odd[pos] = i % 2 && typeof args[pos] === 'object' && args[pos] !== null && !Array.isArray(args[pos])
            && pos === args.length - 1 ? { ...(args[pos] as Doc), [r.pick(['nodeKeys', 'result', 'digest', 'origin',
              'event', 'kernels'])]: oddValue(r) } : oddValue(r);
          total++;
          try {
            const v = await fn(...odd);
            t.true(wellFormed(v), `${name} argument ${pos}`);
          } catch (e) {
            throws++;
            t.log(`${name} argument ${pos}: threw ${String(e)}`);
          }
        }
      }
    }
    t.log(`odd arguments: ${total} calls, ${throws} throws`);
    t.is(throws, 0);
  });
