// A benchmark anchor (bench/service.ts starts each in its own node process, as svcd runs in its own):
// the least a Koa + @koa/router + Ajv app must do to answer the same requests. Modes: `bare` (validate,
// reply), `put` (the same plus one synced LevelDB put), `paid` (quote → accept → execute, one synced
// put each, an Ed25519 signature on execute), `paid-pg` (the same flow on PostgreSQL through `pg`: the
// quote one INSERT, accept and execute a read and one guarded UPDATE each, every write one committed
// transaction). No rate limits, no ledger, no auth beyond a bearer check.
// Usage: node --import tsx bench/service/anchor.ts <bare|put|paid|paid-pg> <data-dir | postgres URL>; prints
// {"url":…} once listening.
import { generateKeyPairSync, randomBytes, randomUUID, sign } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Koa from 'koa';
import Router from '@koa/router';
import { Level } from 'level';
import pg from 'pg';
import { ajv, newQuote, quoteBody, readJson, text, type Json } from './anchor-parts.ts';

type Mode = 'bare' | 'put' | 'paid' | 'paid-pg';

const mode = process.argv[2] as Mode;
const dataDir = process.argv[3];
if (!['bare', 'put', 'paid', 'paid-pg'].includes(mode) || !dataDir) {
  console.error('usage: anchor.ts <bare|put|paid|paid-pg> <data-dir | postgres URL>');
  process.exit(2);
}

const acceptBody = ajv.compile({
  type: 'object',
  properties: { machine_id: text },
  required: ['machine_id'],
  additionalProperties: false,
});
const executeBody = ajv.compile({
  type: 'object',
  properties: { machine_id: text, quote_id: text },
  required: ['machine_id', 'quote_id'],
  additionalProperties: false,
});

/** Where quotes are kept: a key-value view over LevelDB (synced puts) or a PostgreSQL table. */
interface Quotes {
  open(): Promise<void>;
  get(id: string): Promise<Json | null>;
  create(q: Json): Promise<void>;
  /** writes `next` over the quote while it is in `state`; false when it is not (any more) */
  update(id: string, state: string, next: Json): Promise<boolean>;
  close(): Promise<void>;
}

function levelQuotes(dir: string): Quotes {
  const db = new Level<string, string>(join(dir, 'anchor-db'));
  const put = (q: Json) => db.put(`q:${q.quote_id as string}`, JSON.stringify(q), { sync: true });
  return {
    open: () => db.open(),
    get: async (id) => {
      const raw = await db.get(`q:${id}`);
      return raw === undefined ? null : (JSON.parse(raw) as Json);
    },
    create: put,
    // one process: the state read just before is still the state (the event loop runs one request at a time
    // between awaits, and the flows never share a quote)
    update: async (_id, _state, next) => { await put(next); return true; },
    close: () => db.close(),
  };
}

function pgQuotes(url: string): Quotes {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  return {
    open: async () => {
      await pool.query('CREATE TABLE IF NOT EXISTS anchor_quotes (id text PRIMARY KEY, value jsonb NOT NULL)');
    },
    get: async (id) => (await pool.query<{ value: Json }>('SELECT value FROM anchor_quotes WHERE id = $1', [id]))
      .rows[0]?.value ?? null,
    create: async (q) => {
      await pool.query('INSERT INTO anchor_quotes (id, value) VALUES ($1, $2)', [q.quote_id, q]);
    },
    update: async (id, state, next) => (await pool.query(
      "UPDATE anchor_quotes SET value = $2 WHERE id = $1 AND value->>'state' = $3", [id, next, state])).rowCount === 1,
    close: () => pool.end(),
  };
}

const db = mode === 'bare' ? null : mode === 'paid-pg' ? pgQuotes(dataDir) : levelQuotes(dataDir);
const { privateKey } = generateKeyPairSync('ed25519');

function fail(ctx: Koa.Context, status: number, code: string): void {
  ctx.status = status;
  ctx.body = { ok: false, error: { code } };
}

async function getQuote(ctx: Koa.Context, id: string, machineId: unknown): Promise<Json | null> {
  const q = await db!.get(id);
  if (!q) fail(ctx, 404, 'not_found');
  else if (q.machine_id !== machineId) fail(ctx, 403, 'quote_wrong_machine');
  return q && q.machine_id === machineId ? q : null;
}

const app = new Koa();
const router = new Router();

router.post('/api/v1/quotes/:service', async (ctx) => {
  const body = await readJson(ctx.req);
  if (!quoteBody(body)) return fail(ctx, 400, 'invalid_request');
  const q = newQuote(body);
  if (db) await db.create(q);
  ctx.body = { ok: true, request_id: randomUUID(), source: 'svc', ...q };
});

if (mode === 'paid' || mode === 'paid-pg') {
  const bearer = (ctx: Koa.Context) => /^Bearer \S+$/.test(ctx.get('authorization'));

  router.post('/api/v1/quotes/:quote_id/accept', async (ctx) => {
    if (!bearer(ctx)) return fail(ctx, 401, 'unauthorized');
    const body = await readJson(ctx.req);
    if (!acceptBody(body)) return fail(ctx, 400, 'invalid_request');
    const q = await getQuote(ctx, ctx.params.quote_id!, body.machine_id);
    if (!q) return;
    if (q.state !== 'issued') return fail(ctx, 409, 'quote_not_issued');
    const next = { ...q, state: 'accepted', accepted_at: new Date().toISOString() };
    if (!await db!.update(q.quote_id as string, 'issued', next)) return fail(ctx, 409, 'quote_not_issued');
    ctx.body = { ok: true, request_id: randomUUID(), source: 'svc', ...next };
  });

  router.post('/api/v1/executions/get-pulse', async (ctx) => {
    if (!bearer(ctx)) return fail(ctx, 401, 'unauthorized');
    const body = await readJson(ctx.req);
    if (!executeBody(body)) return fail(ctx, 400, 'invalid_request');
    const q = await getQuote(ctx, body.quote_id as string, body.machine_id);
    if (!q) return;
    if (q.state !== 'accepted') return fail(ctx, 409, 'quote_not_accepted');
    const output = randomBytes(32).toString('hex');
    const receipt = {
      receipt_id: `rcpt_${randomBytes(15).toString('base64url')}`,
      quote_id: q.quote_id,
      machine_id: q.machine_id,
      units_charged: q.quote_units,
      output_hex: output,
      executed_at: new Date().toISOString(),
    };
    const signature = sign(null, Buffer.from(JSON.stringify(receipt)), privateKey).toString('base64url');
    const done = { ...q, state: 'executed', receipt: { ...receipt, signature } };
    if (!await db!.update(q.quote_id as string, 'accepted', done)) return fail(ctx, 409, 'quote_not_accepted');
    ctx.body = { ok: true, request_id: randomUUID(), source: 'svc', status: 'ok', ...receipt, signature };
  });
}

app.use(router.routes());
app.use(router.allowedMethods());

if (db) await db.open();
const server = app.listen(0, '127.0.0.1', () => {
  const a = server.address() as AddressInfo;
  console.log(JSON.stringify({ url: `http://127.0.0.1:${a.port}`, mode }));
});
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void (db ? db.close() : Promise.resolve()).then(() => process.exit(0));
});
