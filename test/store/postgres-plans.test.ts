// The plans PostgreSQL keeps for the store's prepared statements never scan the whole table. A prepared
// statement's plan is made once and kept (a generic plan), and one made while the table was small could
// be a scan of all of it for every run after; so each statement the store prepares is planned here
// generically on a fresh, empty table (where a scan is as cheap as it gets) and its plan must still find
// rows by key. Statements the store does not prepare are planned at each run and are not kept.
import test from 'ava';
import pg from 'pg';
import { GET_MANY_SQL, GET_SQL } from '../../src/store/pg-store.ts';
import { PgStore } from '../../src/store/pg-store.ts';
import { writeStatement } from '../../src/store/pg-write.ts';
import { create, del, delIf, put, replace, type Op } from '../../src/store/store.ts';
import { testNeeding } from '../support/needs.ts';
import { POSTGRES, postgresForFile } from '../support/postgres.ts';

const postgres = postgresForFile(test);
/** A parameter's text as PostgreSQL reads it: bytea as hex, an array as an array literal. */
const asText = (v: unknown): string => {
  if (Buffer.isBuffer(v)) return `\\x${v.toString('hex')}`;
  if (Array.isArray(v)) return `{${v.map((e) => `"${asText(e).replace(/[\\"]/g, (ch) => `\\${ch}`)}"`).join(',')}}`;
  return String(v);
};

/** The batches of a paid flow (accept, execute), and the other shapes the store keeps plans for. */
const BATCHES: Op[][] = [
  [put('quotes', 'q', {}), put('quote_expiry', 'e', {}), put('accounts', 'm', {}), create('journal', 'm!1', {})],
  [put('quotes', 'q', {}), del('quote_expiry', 'e'), put('receipts', 'r', {}), put('executions', 'q', {}),
    put('accounts', 'm', {}), create('journal', 'm!2', {})],
  ['a', 'b', 'c', 'd'].map((k) => del('idempotency', k)),
  [del('quotes', 'a'), del('quote_expiry', 'b')],
];

testNeeding(test, 'every statement the store prepares finds rows by key in its kept plan, even one made on an '
  + 'empty table', POSTGRES, async (t) => {
  const url = await (await postgres()).freshDatabase();
  await (await PgStore.open(url)).close(); // the schema
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  t.teardown(() => c.end());
  await c.query('SET plan_cache_mode = force_generic_plan');
  const plan = async (name: string, text: string, values: unknown[]) => {
    await c.query(`PREPARE ${name} AS ${text}`);
    // each value as the driver sends it, as a literal the parameter's type takes (EXECUTE binds no parameters)
    const args = values.map((v) => c.escapeLiteral(asText(v))).join(', ');
    const r = await c.query(`EXPLAIN EXECUTE ${name}(${args})`);
    return r.rows.map((row: Record<string, string>) => row['QUERY PLAN']).join('\n');
  };
  const statements = [
    { name: 'get', text: GET_SQL, values: ['quotes', Buffer.from('q')] },
    { name: 'get_many', text: GET_MANY_SQL, values: [['machines', 'accounts'], [Buffer.from('m'), Buffer.from('m')]] },
    ...BATCHES.map((b) => writeStatement(b)).map((s) => ({ ...s, name: s.name! })),
  ];
  for (const s of statements) {
    t.truthy(s.name, 'the store prepares it');
    const p = await plan(s.name, s.text, s.values);
    t.notRegex(p, /Seq Scan on svc_records|Hash Join|Merge Join/, `${s.name}:\n${p}`);
  }
});

test('a statement keeps its plan only when no plan could scan the table: upserts, creates, 4 deletes by key', (t) => {
  const named = (ops: Op[]) => writeStatement(ops).name;
  t.is(named([put('quotes', 'a', {}), create('journal', 'j', {})]), 'svc_write_m_k');
  t.is(named([del('quote_expiry', 'e'), put('quotes', 'a', {})]), 'svc_write_g1_k');
  t.is(named(['a', 'b', 'c', 'd'].map((k) => del('quotes', k))), 'svc_write_g4');
  const five = ['a', 'b', 'c', 'd', 'e'].map((k) => del('quotes', k));
  t.is(named(five), undefined, 'five deletes: a list, planned each run');
  t.is(named([replace('leases', 'l', { v: 2 }, { v: 1 })]), undefined, 'a compare: planned each run');
  t.is(named([delIf('leases', 'l', { v: 1 })]), undefined);
  const s = writeStatement([del('quote_expiry', 'e'), put('quotes', 'a', { v: 1 })]);
  t.deepEqual(s.values.slice(0, 2), ['quote_expiry', Buffer.from('e')]);
  t.regex(s.text, /DELETE FROM svc_records WHERE \(sub, key\) IN \(\(\$1::text, \$2::bytea\)\)/);
});
