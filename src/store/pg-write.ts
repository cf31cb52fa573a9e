// The one SQL statement a PostgreSQL store batch is written with (pg-store.ts): built from the parts the
// batch has, so a batch of upserts does not plan deletes it does not make. Later ops win, so each key
// appears once: the parts never touch one row twice. Upserts and creates go in key order, so two batches
// lock their common rows in one order (no deadlock between them).
//
// A statement is named (prepared once per connection, its plan kept) only when no plan it could keep
// depends on the table's size: creates, upserts, and up to DELETES_INLINE deletes, each named by its key
// (a unique index lookup whatever the statistics say). Deletes past that, and the guarded compare-and-set
// and compare-and-delete parts, join the table to a list; such a statement goes unnamed and is planned
// at each run for the table as it is then (a kept plan, chosen while the table was small, was a hash join
// over the whole table for every delete: it cost a paid flow a third more of PostgreSQL's CPU).
import { lastOpPerKey, type Op } from './contract.ts';

/** Deletes named one by one in the statement (each a lookup of the primary key); past this, one list. */
const DELETES_INLINE = 4;

export interface WriteStatement {
  /** the prepared statement's name, when its plan may be kept */
  name?: string;
  text: string;
  values: unknown[];
}

const utf8 = (s: string) => Buffer.from(s, 'utf8');

/** The ops of one batch sorted into the parts of its statement. */
interface Parts {
  gone: [string[], Buffer[]];
  made: [string[], Buffer[], string[]];
  kept: [string[], Buffer[], string[]];
  swapped: [string[], Buffer[], string[], string[]];
  dropped: [string[], Buffer[], string[]];
}

/** Throws (landing nothing) on a value JSON cannot encode. */
function partsOf(ops: readonly Op[]): Parts {
  const p: Parts = {
    gone: [[], []], made: [[], [], []], kept: [[], [], []], swapped: [[], [], [], []], dropped: [[], [], []],
  };
  for (const { op: o, created } of lastOpPerKey(ops)) {
    if (o.type === 'del') {
      const d = p.dropped, g = p.gone;
      if (o.ifUnchanged) {
        d[0].push(o.sub); d[1].push(utf8(o.key)); d[2].push(JSON.stringify(o.ifUnchanged));
      } else {
        g[0].push(o.sub); g[1].push(utf8(o.key));
      }
      continue;
    }
    if (!created && o.ifUnchanged) {
      const s = p.swapped;
      s[0].push(o.sub); s[1].push(utf8(o.key));
      s[2].push(JSON.stringify(o.value)); s[3].push(JSON.stringify(o.ifUnchanged));
      continue;
    }
    const to = created ? p.made : p.kept; // a create then a put of one key: still a create
    to[0].push(o.sub); to[1].push(utf8(o.key)); to[2].push(JSON.stringify(o.value));
  }
  return p;
}

/** Numbers the statement's parameters as they are added. */
class Params {
  readonly values: unknown[] = [];
  add(v: unknown, type: string): string {
    this.values.push(v);
    return `$${this.values.length}::${type}`;
  }
}

function goneSql(gone: Parts['gone'], params: Params): string {
  const [subs, keys] = gone;
  if (subs.length <= DELETES_INLINE) {
    const each = subs.map((s, i) => `(${params.add(s, 'text')}, ${params.add(keys[i], 'bytea')})`);
    return `DELETE FROM svc_records WHERE (sub, key) IN (${each.join(', ')})`;
  }
  return `DELETE FROM svc_records r USING unnest(${params.add(subs, 'text[]')}, ${params.add(keys, 'bytea[]')})
    AS d(sub, key) WHERE r.sub = d.sub AND r.key = d.key`;
}

function insertSql(part: Parts['made'], params: Params, upsert: boolean): string {
  const list = `unnest(${params.add(part[0], 'text[]')}, ${params.add(part[1], 'bytea[]')}, `
    + `${params.add(part[2], 'json[]')})`;
  return `INSERT INTO svc_records (sub, key, value) SELECT sub, key, value FROM ${list} AS c(sub, key, value)
    ORDER BY sub, key${upsert ? ' ON CONFLICT (sub, key) DO UPDATE SET value = EXCLUDED.value' : ''}`;
}

// compare-and-set and compare-and-delete: each matches a row only while it holds the text compared (json
// keeps the text as written); svc_guard (migration 2) undoes the statement when any matched nothing
function swappedSql(s: Parts['swapped'], params: Params): string {
  const list = `unnest(${params.add(s[0], 'text[]')}, ${params.add(s[1], 'bytea[]')}, ${params.add(s[2], 'json[]')}, `
    + `${params.add(s[3], 'text[]')})`;
  return `UPDATE svc_records r SET value = s.value FROM ${list} AS s(sub, key, value, was)
    WHERE r.sub = s.sub AND r.key = s.key AND r.value::text = s.was RETURNING 1`;
}

function droppedSql(d: Parts['dropped'], params: Params): string {
  const list = `unnest(${params.add(d[0], 'text[]')}, ${params.add(d[1], 'bytea[]')}, ${params.add(d[2], 'text[]')})`;
  return `DELETE FROM svc_records r USING ${list} AS d(sub, key, was)
    WHERE r.sub = d.sub AND r.key = d.key AND r.value::text = d.was RETURNING 1`;
}

// an unsynced batch turns the WAL flush off for its own transaction (set_config's is_local: the statement's
// implicit transaction), read at its commit: one round trip, and no transaction left open between two
const UNSYNCED = `set_config('synchronous_commit', 'off', true)`;

/**
 * The statement writing `ops` in one transaction (`sync: false`: committed without waiting for its WAL
 * flush); throws (landing nothing) on a value JSON cannot encode.
 */
export function writeStatement(ops: readonly Op[], opts: { sync?: boolean } = {}): WriteStatement {
  const p = partsOf(ops);
  const params = new Params();
  const ctes: string[] = [];
  const shape: string[] = [];
  if (p.gone[0].length) {
    ctes.push(`gone AS (${goneSql(p.gone, params)})`);
    shape.push(`g${Math.min(p.gone[0].length, DELETES_INLINE + 1)}`);
  }
  if (p.made[0].length) ctes.push(`made AS (${insertSql(p.made, params, false)})`), shape.push('m');
  if (p.kept[0].length) ctes.push(`kept AS (${insertSql(p.kept, params, true)})`), shape.push('k');
  const checked: string[] = [];
  if (p.swapped[0].length) ctes.push(`swapped AS (${swappedSql(p.swapped, params)})`), checked.push('swapped');
  if (p.dropped[0].length) ctes.push(`dropped AS (${droppedSql(p.dropped, params)})`), checked.push('dropped');
  const wanted = p.swapped[0].length + p.dropped[0].length;
  const held = checked.map((c) => `(SELECT count(*) FROM ${c})`).join(' + ');
  const unsynced = opts.sync === false;
  const result = [checked.length ? `svc_guard(${held}, ${params.add(wanted, 'integer')})` : '1'];
  if (unsynced) result.push(UNSYNCED), shape.push('u');
  const text = `WITH ${ctes.join(',\n  ')}\nSELECT ${result.join(', ')}`;
  const values = params.values;
  const named = !checked.length && p.gone[0].length <= DELETES_INLINE;
  return named ? { name: `svc_write_${shape.join('_')}`, text, values } : { text, values };
}
