// Payment references in one spelling (src/core/payment-reference.ts), rail by rail: what parses to which
// canonical transfer, what is refused and how the refusal reads. Pure: no store.
import test from 'ava';
import { createHash } from 'node:crypto';
import { base58 } from '@scure/base';
import { canonicalOrAsIs, formatReference, parseReference } from '../../src/core/payment-reference.ts';
import { ServiceError } from '../../src/errors.ts';

const HEX = createHash('sha256').update('a transfer').digest('hex');
const SIG = base58.encode(createHash('sha512').update('a signature').digest());

const refusal = (t: import('ava').ExecutionContext, rail: Parameters<typeof parseReference>[0], text: string) => {
  const e = t.throws(() => parseReference(rail, text), { instanceOf: ServiceError }, text) as ServiceError;
  t.is(e.code, 'invalid_request');
  t.deepEqual(e.details, { field: 'reference' });
  t.true(e.message.startsWith(`reference ${JSON.stringify(text)} is not a transfer on ${rail}: `), e.message);
  return e.message;
};

test('Base: 0x and lower-case hex, a decimal index, whatever the spelling', (t) => {
  const want = { tx: `0x${HEX}`, index: 3 };
  const spellings = [
    `0x${HEX}:3`, `0X${HEX.toUpperCase()}:3`, `${HEX}:3`, `0x${HEX}:03`, `0x${HEX}:0x3`, `0x${HEX}:0X3`,
  ];
  for (const s of spellings) {
    t.deepEqual(parseReference('USDC_BASE', s), want, s);
  }
  t.deepEqual(parseReference('USDC_BASE', `0x${HEX.toUpperCase()}`), { tx: `0x${HEX}`, index: null }, 'bare');
  t.deepEqual(parseReference('USDC_BASE', `0x${HEX}:1000000000`), { tx: `0x${HEX}`, index: 1_000_000_000 });
  t.deepEqual(parseReference('USDC_BASE', `0x${HEX}:0x1f`), { tx: `0x${HEX}`, index: 31 }, 'a hex index');
  t.is(formatReference(`0x${HEX}`, 7), `0x${HEX}:7`);
});

test('TRON: 64 lower-case hex without 0x, as Tronscan writes it', (t) => {
  t.deepEqual(parseReference('USDT_TRON', `0x${HEX.toUpperCase()}:12`), { tx: HEX, index: 12 });
  t.deepEqual(parseReference('USDT_TRON', `${HEX}:0`), { tx: HEX, index: 0 });
  const m = refusal(t, 'USDT_TRON', 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb:0');
  t.regex(m, /the transaction id is not 32 bytes of hex; write 64 hex digits \(the transaction id Tronscan shows\)/);
});

test('Solana: a base58 signature of 64 bytes, kept as written (base58 is case-sensitive)', (t) => {
  t.deepEqual(parseReference('USDC_SOLANA', `${SIG}:4`), { tx: SIG, index: 4 });
  t.deepEqual(parseReference('USDT_SOLANA', SIG), { tx: SIG, index: null });
  const short = base58.encode(createHash('sha256').update('32 bytes').digest());
  t.regex(refusal(t, 'USDC_SOLANA', `${short}:0`), /the signature is not 64 bytes of base58; write the base58/);
  t.regex(refusal(t, 'USDC_SOLANA', `${SIG.slice(0, -1)}0:0`), /not 64 bytes of base58/, 'a 0 is not base58');
  t.regex(refusal(t, 'USDC_SOLANA', `0x${HEX}:0`), /not 64 bytes of base58/);
});

test('refused: hex of another length or with anything around it, an index that is not a number or too big', (t) => {
  const hexForm = /; write 0x \+ 64 hex digits, then :<log index> \(e\.g\. 0x5c50…e1a2:3\)$/;
  const bad = [`0x${HEX.slice(1)}:0`, `0x${HEX}0:0`, `x0x${HEX}:0`, `0x${HEX}z:0`, ` 0x${HEX}:0`, `tx ${HEX}`, ''];
  for (const s of bad) {
    t.regex(refusal(t, 'USDC_BASE', s), /the transaction id is not 32 bytes of hex/, s);
    t.regex(refusal(t, 'USDC_BASE', s), hexForm, s);
  }
  const notNumbers = ['', '1e3', '-1', '3 ', '0x123456789', '0x'];
  const cases: [string, string][] = [
    ...notNumbers.map((i): [string, string] => [`0x${HEX}:${i}`, `the index ${JSON.stringify(i)} is not a number`]),
    [`0x${HEX}:1000000001`, 'the index 1000000001 is out of range'],
  ];
  for (const [s, why] of cases) {
    t.regex(refusal(t, 'USDC_BASE', s), new RegExp(`: ${why.replace(/[()]/g, '\\$&')}; write `), s);
  }
  // the last colon splits: a colon inside is part of the transaction id, which is then no id
  t.regex(refusal(t, 'USDC_BASE', `0x${HEX}:1:2`), /the transaction id is not 32 bytes of hex/);
});

test('canonicalOrAsIs: a stored reference in canonical form when it is one, else as it was', (t) => {
  t.is(canonicalOrAsIs('USDC_BASE', `0X${HEX.toUpperCase()}:00`), `0x${HEX}:0`);
  t.is(canonicalOrAsIs('USDC_BASE', HEX), `0x${HEX}`, 'bare: the transaction alone');
  t.is(canonicalOrAsIs('USDT_TRON', 'an old free-text reference'), 'an old free-text reference');
});
