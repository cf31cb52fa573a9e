// The PostgreSQL store's schema, created and migrated by the node at open: numbered migrations applied
// in order, each in its own transaction with its row in svc_migrations, under an advisory lock so nodes
// starting together apply each one once. Idempotent: a database already at the newest version is left
// as it is. A database newer than this code (a row this list does not know) is refused, not guessed at.
// docs/scale-out.md "Schema" describes the tables.
import type pg from 'pg';
import { hold } from './pg-held.ts';

export interface Migration { version: number; name: string; sql: string }

/** Append only: a released migration is never edited (its name is checked against the database). */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'records',
    // One table for every sublevel: a batch touching several sublevels is one statement (one round
    // trip, one implicit transaction), and a new sublevel needs no DDL. bytea keys compare byte-wise
    // (memcmp), exactly as LevelDB orders its keys; json (not jsonb) keeps a value's text as written:
    // jsonb reorders keys and refuses \u0000.
    sql: `
      CREATE TABLE svc_records (
        sub text NOT NULL,
        key bytea NOT NULL,
        value json NOT NULL,
        PRIMARY KEY (sub, key)
      )`,
  },
  {
    version: 2,
    name: 'guards',
    // A batch with ifUnchanged ops (compare-and-set, compare-and-delete: leases, an invoice amount taken
    // over from an expired invoice) counts the rows its guarded ops changed and calls this with how many
    // it needed: fewer means another node changed one first, and the error undoes the whole statement.
    sql: `
      CREATE FUNCTION svc_guard(held bigint, wanted integer) RETURNS integer LANGUAGE plpgsql AS $$
      BEGIN
        IF held < wanted THEN
          RAISE EXCEPTION 'a record this batch compares changed under it' USING ERRCODE = 'SV001';
        END IF;
        RETURN 1;
      END $$`,
  },
];

/** pg_advisory_lock key: "svc_migr" as a 64-bit integer, taken only while migrating. */
const MIGRATION_LOCK = '8319681465028765298';

/** Brings the database to the newest migration; returns the versions applied now (none when current). */
export async function migrate(pool: pg.Pool, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  const c = await pool.connect();
  const held = hold(c);
  const applied: number[] = [];
  try {
    await c.query('SELECT pg_advisory_lock($1::bigint)', [MIGRATION_LOCK]);
    try {
      await c.query(`CREATE TABLE IF NOT EXISTS svc_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now())`);
      const { rows } = await c.query<{ version: number; name: string }>('SELECT version, name FROM svc_migrations');
      const known = new Map(migrations.map((m) => [m.version, m.name]));
      for (const r of rows) {
        const name = known.get(r.version);
        if (name === undefined) {
          throw new Error(`the database has schema migration ${r.version} (${r.name}), newer than this svcd knows ` +
            `(${migrations.at(-1)?.version ?? 0}): run the newer svcd, or a fresh database`);
        }
        if (name !== r.name) {
          throw new Error(`schema migration ${r.version} is "${r.name}" in the database, "${name}" here`);
        }
      }
      const done = new Set(rows.map((r) => r.version));
      for (const m of migrations) {
        if (done.has(m.version)) continue;
        await c.query('BEGIN');
        try {
          await c.query(m.sql);
          await c.query('INSERT INTO svc_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
          await c.query('COMMIT');
        } catch (e) {
          await c.query('ROLLBACK');
          throw e;
        }
        applied.push(m.version);
      }
    } finally {
      await c.query('SELECT pg_advisory_unlock($1::bigint)', [MIGRATION_LOCK]);
    }
  } catch (e) {
    held.fail(e as Error); // a connection that failed is closed, not pooled (its lock goes with it)
    throw e;
  } finally {
    held.release();
  }
  return applied;
}
