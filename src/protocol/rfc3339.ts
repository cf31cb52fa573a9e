// RFC 3339 date-times (§5.6) as callers send them: the grammar, and that the time exists (§5.7) — no
// 30th of February, hour 24 or offset +24:00 — then the instant it names, exactly (nanoseconds, where
// Date.parse keeps milliseconds and takes 23:59:60 for NaN).
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:Z|([+-])(\d{2}):(\d{2}))$/;

const leap = (y: number) => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/**
 * The instant an RFC 3339 date-time names, in nanoseconds since 1970-01-01T00:00:00Z, or null when the
 * text is not one or names a day, hour, minute, second or offset that does not exist. A leap second
 * (:60) is taken only at 23:59 UTC, the end of a UTC day, and counts as the second after :59 (the same
 * instant as the next day's 00:00:00, so it orders after every :59.x of its minute).
 */
export function rfc3339Nanos(text: string): bigint | null {
  const m = DATE_TIME.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as
    [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1) return null;
  if (day > (month === 2 && leap(year) ? 29 : MONTH_DAYS[month - 1]!)) return null;
  if (hour > 23 || minute > 59 || second > 60) return null;
  let offset = 0; // minutes east of UTC
  if (m[8]) {
    const oh = Number(m[9]), om = Number(m[10]);
    if (oh > 23 || om > 59) return null;
    offset = (m[8] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const utcMinute = hour * 60 + minute - offset;
  if (second === 60 && ((utcMinute % 1440) + 1440) % 1440 !== 1439) return null;
  const seconds = daysFromCivil(year, month, day) * 86_400 + utcMinute * 60 + second;
  return BigInt(seconds) * 1_000_000_000n + BigInt((m[7] ?? '').padEnd(9, '0'));
}
