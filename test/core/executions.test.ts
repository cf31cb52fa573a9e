// The executions beyond GET_PULSE, end to end through the TLS edge: each one quoted, accepted,
// executed and receipted, with its output checked independently (node:crypto for signatures and
// hashes, the BVM reference interpreter for programs).
import test from 'ava';
import { createHash, createPublicKey, verify } from 'node:crypto';
import { fundMachine } from '../support/svcd.ts';
import type { SvcClient } from '../../src/client/client.ts';
import { assemble } from '../../src/kernels/bvm-assembler.ts';
import { runReference } from '../reference/bvm-ref.ts';
import { canonicalJson } from '../../src/protocol/canonical.ts';
import { sharedSvcd } from '../support/start-svcd.ts';

let c: SvcClient;
const tokens: Record<string, string> = {};
// registered before sharedSvcd's serial after hook: the client is closed when svcd stops
test.after.always(() => c?.close());
const s = sharedSvcd(test, {}, { args: ['core'], checkLedger: true });
test.before(async () => {
  tokens.a = await fundMachine(s, 'ex-a', 1);
  tokens.b = await fundMachine(s, 'ex-b', 1);
  c = await s.edge();
});

const hex = (b: Uint8Array | string) => Buffer.from(b).toString('hex');
const pub = (b64url: string) => createPublicKey({
  key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(b64url, 'base64url')]),
  format: 'der',
  type: 'spki',
});

async function run(
  machine: 'a' | 'b', service: string, quoteArgs: Record<string, unknown>, execArgs: Record<string, unknown>,
) {
  const m = `ex-${machine}`;
  const q = await c.request('QUOTE', { service, machine_id: m, ...quoteArgs });
  await c.request('ACCEPT_QUOTE', { quote_id: q.quote_id, machine_id: m }, { token: tokens[machine] });
  const command = service.toUpperCase().replaceAll('-', '_');
  return c.request(command, { quote_id: q.quote_id, machine_id: m, ...execArgs }, { token: tokens[machine] });
}

test.serial('MAKE_BCT seals for the caller; ' +
  'VERIFY_BCT opens it only for the same machine and untampered', async (t) => {
  const plain = hex('attack at dawn');
  const made = await run('a', 'make-bct', { plain_hex: plain }, { plain_hex: plain });
  const packet = made.packet_hex as string;
  t.is(packet.slice(0, 8), hex('BCT1'));
  t.is(packet.length / 2, 14 + 52);
  const made2 = await run('a', 'make-bct', { plain_hex: plain }, { plain_hex: plain });
  t.not(made2.packet_hex, packet, 'a fresh nonce every time');

  const ok = await run('a', 'verify-bct', { packet_hex: packet }, { packet_hex: packet });
  t.deepEqual([ok.valid, ok.plain_hex, ok.status], [true, plain, 'valid']);
  const other = await run('b', 'verify-bct', { packet_hex: packet }, { packet_hex: packet });
  t.deepEqual([other.valid, other.plain_hex, other.reason], [false, undefined, 'not_authentic_or_not_this_machine']);
  const flipped = packet.slice(0, 80) + (packet[80] === '0' ? '1' : '0') + packet.slice(81);
  t.false((await run('a', 'verify-bct', { packet_hex: flipped }, { packet_hex: flipped })).valid);
  const junk = hex('BCT2') + packet.slice(8);
  t.is((await run('a', 'verify-bct', { packet_hex: junk }, { packet_hex: junk })).reason, 'not_bct1');
  const tooBig = { service: 'make-bct', machine_id: 'ex-a', plain_hex: '00'.repeat(4097) };
  const e = await t.throwsAsync(c.request('QUOTE', tooBig));
  t.is((e as any).code, 'invalid_request');
  t.regex(e!.message, /at most 4096/);
});

test.serial('VERIFY_RESULT accepts a genuine result tag and refuses a forged or malformed one', async (t) => {
  const plain = hex('x');
  const made = await run('a', 'make-bct', { plain_hex: plain }, { plain_hex: plain });
  const material = (over: Record<string, unknown> = {}) => hex(JSON.stringify({
    service: made.service,
    quote_id: made.quote_id,
    input_digest: made.input_digest,
    output_digest: made.output_digest,
    result_tag: made.result_tag,
    ...over,
  }));
  const good = material();
  const asked = await run('b', 'verify-result', { bytes: good.length / 2 }, { packet_hex: good });
  t.true(asked.valid as boolean, 'anyone can ask');
  const forged = material({ output_digest: '00'.repeat(32) });
  const r = await run('b', 'verify-result', { bytes: forged.length / 2 }, { packet_hex: forged });
  t.deepEqual([r.valid, r.reason, r.status], [false, 'tag_mismatch', 'invalid']);
  const junk = hex('not json');
  t.regex((await run('b', 'verify-result', { bytes: 8 }, { packet_hex: junk })).reason as string, /^malformed/);
});

test.serial('ATTEST_EVENT returns an in-toto Statement in a DSSE envelope that verifies offline', async (t) => {
  const event = hex('{"door":"opened","at":"2026-11-22T10:00:00Z"}');
  const r = await run('a', 'attest-event', { bytes: event.length / 2 }, { plain_hex: event });
  const env = r.envelope as { payloadType: string; payload: string; signatures: { keyid: string; sig: string }[] };
  t.is(env.payloadType, 'application/vnd.in-toto+json');
  const body = Buffer.from(env.payload, 'base64');
  const type = Buffer.from(env.payloadType);
  const paeBytes = Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `), type, Buffer.from(` ${body.length} `), body]);
  t.true(verify(null, paeBytes, pub(r.public_key as string), Buffer.from(env.signatures[0]!.sig, 'base64')));
  const padded = Buffer.concat([paeBytes, Buffer.from(' ')]);
  t.false(verify(null, padded, pub(r.public_key as string), Buffer.from(env.signatures[0]!.sig, 'base64')));
  const stmt = JSON.parse(body.toString('utf8'));
  t.is(stmt._type, 'https://in-toto.io/Statement/v1');
  t.is(stmt.subject[0].digest.sha256, createHash('sha256').update(Buffer.from(event, 'hex')).digest('hex'));
  t.is(stmt.predicate.machine_id, 'ex-a');
});

test.serial('SUBMIT_ID derives the same id from the same document for anyone, with a signed record', async (t) => {
  const doc = hex('-----BEGIN PUBLIC KEY----- example -----END PUBLIC KEY-----');
  const a = await run('a', 'submit-id', { bytes: doc.length / 2 }, { plain_hex: doc });
  const b = await run('b', 'submit-id', { bytes: doc.length / 2 }, { plain_hex: doc });
  t.is(a.id, b.id);
  const digest = createHash('sha256').update('svc/id/v1\0').update(Buffer.from(doc, 'hex')).digest('hex');
  t.is(a.id, `svcid_${digest.slice(0, 32)}`);
  const recordBytes = Buffer.from(canonicalJson(a.record));
  t.true(verify(null, recordBytes, pub(a.public_key as string), Buffer.from(a.signature as string, 'base64url')));
  const other = await run('a', 'submit-id', { bytes: 3 }, { plain_hex: 'abcdef' });
  t.not(other.id, a.id);
});

test.serial('BVM_EXEC runs a program with its input, fuel = bits, output capped by max_output; ' +
  'traps are charged results', async (t) => {
  const prog = assemble(
    '.memory 64\npush 0\npush 0\ninlen\nincopy\npush 32\npush 0\ninlen\nsha256\npush 32\npush 32\noutcopy\nhalt',
  ).image;
  const input = Buffer.from('hello bvm');
  const size = prog.length + input.length;
  const r = await run('a', 'bvm-exec', { bytes: size, bits: 1000 }, { plain_hex: hex(prog), packet_hex: hex(input) });
  const ref = runReference(prog, input, 1000, 8192);
  const want = ['halted', ref.steps, createHash('sha256').update(input).digest('hex')];
  t.deepEqual([(r.bvm as any).status, (r.bvm as any).steps, r.output_hex], want);
  t.is(r.status, 'halted');

  const spin = assemble('l: jmp l').image;
  const before = await c.request('BALANCE', { machine_id: 'ex-a' }, { token: tokens.a });
  const trapped = await run('a', 'bvm-exec', { bytes: spin.length, bits: 5000 }, { plain_hex: hex(spin), bits: 2000 });
  t.deepEqual(
    [(trapped.bvm as any).status, (trapped.bvm as any).steps, trapped.status],
    ['out_of_fuel', 2000, 'out_of_fuel'],
  );
  const after = await c.request('BALANCE', { machine_id: 'ex-a' }, { token: tokens.a });
  const spent = BigInt(before.available_units as string) - BigInt(after.available_units as string);
  t.is(spent, BigInt(trapped.units_charged as number));
  const rec = await c.request('VERIFY_RECEIPT', { receipt_id: trapped.receipt_id, machine_id: 'ex-a' });
  t.is((rec.receipt as any).status, 'out_of_fuel');

  const loud = assemble('l: push8 65\nout8\njmp l').image;
  const capped = await run('a', 'bvm-exec', { bytes: loud.length, max_output: 5 }, { plain_hex: hex(loud) });
  t.deepEqual([(capped.bvm as any).status, capped.output_hex], ['output_limit', '4141414141']);
  const bad = await run('a', 'bvm-exec', { bytes: 3 }, { plain_hex: 'ffffff' });
  t.is((bad.bvm as any).status, 'invalid_image');
});

test.serial('SEALED_MESSAGE: HPKE base mode that a standard HPKE recipient opens; ' +
  'a bad recipient key is refused uncharged', async (t) => {
  const { hpkeSuite, SEALED_INFO } = await import('../../src/core/executors/sealed-message.ts');
  const recipient = await hpkeSuite.kem.generateKeyPair();
  const pk = Buffer.from(await hpkeSuite.kem.serializePublicKey(recipient.publicKey));
  const msg = hex('meet me at the usual place');
  const r = await run('a', 'sealed-message', { bytes: 32 + msg.length / 2 }, { plain_hex: msg, packet_hex: hex(pk) });
  t.deepEqual([(r.suite as any).kem_id, (r.suite as any).kdf_id, (r.suite as any).aead_id], [0x20, 0x01, 0x03]);
  const ctx = await hpkeSuite.createRecipientContext({
    recipientKey: recipient.privateKey,
    enc: Buffer.from(r.enc_hex as string, 'hex'),
    info: SEALED_INFO,
  });
  t.is(Buffer.from(await ctx.open(Buffer.from(r.ciphertext_hex as string, 'hex'))).toString('hex'), msg);

  const q = await c.request('QUOTE', { service: 'sealed-message', machine_id: 'ex-a', bytes: 40 });
  await c.request('ACCEPT_QUOTE', { quote_id: q.quote_id, machine_id: 'ex-a' }, { token: tokens.a });
  const badKey = { quote_id: q.quote_id, machine_id: 'ex-a', plain_hex: '00', packet_hex: '11'.repeat(31) };
  const e = await t.throwsAsync(c.request('SEALED_MESSAGE', badKey, { token: tokens.a }));
  t.is((e as any).code, 'invalid_request');
  const goodKey = { quote_id: q.quote_id, machine_id: 'ex-a', plain_hex: '00', packet_hex: hex(pk) };
  const again = await c.request('SEALED_MESSAGE', goodKey, { token: tokens.a });
  t.regex(again.receipt_id as string, /^rcpt_/, 'the failed attempt charged nothing and left the quote usable');
});
