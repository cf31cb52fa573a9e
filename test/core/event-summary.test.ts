// MACHINE_EVENT_LOG's summary (plain_hex): its from and to are RFC 3339 date-times (§5.6) that exist
// — a 30th of February, hour 25 or month 99 are invalid_request, never signed into the log — and from
// ≤ to is decided on the instants they name, offsets and nanoseconds included.
import test from 'ava';
import { parseSummary } from '../../src/core/executors/machine-event-log.ts';
import { ServiceError } from '../../src/errors.ts';

const HEAD = 'ab'.repeat(32);
const summary = (from: string, to: string) =>
  Buffer.from(JSON.stringify({ count: 1, head_hash: HEAD, from, to }), 'utf8');

function refusal(from: string, to: string): string | null {
  try {
    parseSummary(summary(from, to));
    return null;
  } catch (e) {
    if (!(e instanceof ServiceError)) throw e;
    if (e.code !== 'invalid_request') throw new Error(`code ${e.code}`);
    return e.message;
  }
}

const OK = '2026-11-22T00:00:00Z';

test('times that do not exist are invalid_request naming the field', (t) => {
  for (const bad of [
    '2020-02-30T00:00:00Z', '2023-02-29T00:00:00Z', '1900-02-29T00:00:00Z', '2026-04-31T00:00:00Z',
    '2026-13-01T00:00:00Z', '2026-00-10T00:00:00Z', '2026-01-00T00:00:00Z', '9999-99-99T00:00:00Z',
    '2020-02-10T24:00:00Z', '2020-02-10T25:00:00Z', '2020-02-10T23:60:00Z', '2020-02-10T23:59:61Z',
    '2020-02-10T00:00:00+24:00', '2020-02-10T00:00:00-00:60', '2020-02-10T00:00:00.Z',
    // a leap second ends a UTC day, nowhere else
    '2016-12-31T12:00:60Z', '2016-12-31T23:59:60+01:00',
  ]) {
    t.regex(refusal(bad, '9999-12-31T23:59:59Z') ?? 'accepted', /^plain_hex .*: from must be an RFC 3339 time$/, bad);
    t.regex(refusal(OK, bad) ?? 'accepted', /: to must be an RFC 3339 time$/, bad);
  }
});

test('times that exist are taken: leap days, a leap second, offsets, nine fraction digits', (t) => {
  for (const good of [
    '2024-02-29T00:00:00Z', '2000-02-29T12:30:00Z', '2026-01-31T23:59:59Z', '2016-12-31T23:59:60Z',
    '2026-06-30T23:59:59.123456789Z', '2026-06-30T10:00:00+14:00', '2026-06-30T10:00:00-12:00',
    '2017-01-01T00:59:60+01:00',
    '0000-01-01T00:00:00Z',
  ]) {
    t.is(refusal(good, good), null, good);
  }
});

test('from ≤ to compares the instants: offsets, leap seconds and digits past the millisecond', (t) => {
  // the same instant in two offsets
  t.is(refusal('2026-01-01T01:00:00+01:00', '2026-01-01T00:00:00Z'), null);
  t.regex(refusal('2026-01-01T01:00:00.001+01:00', '2026-01-01T00:00:00Z') ?? '', /from is after to/);
  // 100 ns apart: the same millisecond, still after
  t.regex(refusal('2026-01-01T00:00:00.0000002Z', '2026-01-01T00:00:00.0000001Z') ?? '', /from is after to/);
  t.is(refusal('2026-01-01T00:00:00.0000001Z', '2026-01-01T00:00:00.00000010Z'), null);
  // the leap second comes after :59 of its minute
  t.regex(refusal('2016-12-31T23:59:60Z', '2016-12-31T23:59:59.999Z') ?? '', /from is after to/);
  t.is(refusal('2016-12-31T23:59:59.999Z', '2016-12-31T23:59:60Z'), null);
});

test('against Date.parse on random valid times (no leap second): the same order', (t) => {
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  const rnd = (n: number) => Math.floor(Math.random() * n);
  const time = () => {
    const ms = Date.UTC(1970 + rnd(100), 0, 1) + rnd(365 * 86_400_000);
    const d = new Date(ms);
    const off = rnd(2) ? 'Z' : `${rnd(2) ? '+' : '-'}${pad(rnd(24))}:${pad(rnd(60))}`;
    const iso = d.toISOString().slice(0, 19) + (rnd(2) ? `.${pad(d.getUTCMilliseconds(), 3)}` : '');
    return iso + off;
  };
  for (let i = 0; i < 2000; i++) {
    const a = time(), b = time();
    const after = Date.parse(a) > Date.parse(b);
    const r = refusal(a, b);
    t.is(r === null ? false : /from is after to/.test(r), after, `${a} vs ${b}: ${String(r)}`);
  }
});

test('rfc3339Nanos: the instant Date.parse gives, to the millisecond, over years 0000–9999', async (t) => {
  const { rfc3339Nanos } = await import('../../src/protocol/rfc3339.ts');
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  for (let i = 0; i < 5000; i++) {
    const ms = Math.floor(Math.random() * 315_537_897_600_000) - 62_167_219_200_000; // 0000-01-01 .. 9999-12-31
    const d = new Date(ms);
    const offMin = Math.floor(Math.random() * 2 * 1439) - 1439;
    const local = new Date(ms + offMin * 60_000);
    const abs = Math.abs(offMin);
    const off = offMin === 0 ? 'Z' : `${offMin < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
    const text = `${pad(local.getUTCFullYear(), 4)}-${local.toISOString().slice(5, 23)}${off}`;
    if (local.getUTCFullYear() < 0 || local.getUTCFullYear() > 9999) continue;
    t.is(rfc3339Nanos(text), BigInt(d.getTime()) * 1_000_000n, text);
  }
});
