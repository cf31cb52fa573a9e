// GET /metrics: on its own loopback listener, never on the public gateway port;
// after paid flows over HTTP and svc/1 the counters moved (the execution route, the commands on the
// listeners they came in on, ledger batches and group commits, kernel jobs, quote and invoice
// transitions, an error outcome, a rate-limit refusal); with two gateway workers one scrape holds
// both workers' HTTP metrics and the core's; `svcd core` and `svcd gateway` apart each serve their
// own; the sample Grafana dashboard only names metrics the scrape exposes, and docs/operations.md
// describes every one.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { httpFrom } from '../support/http-from.ts';
import { startSvcd } from '../support/start-svcd.ts';
import { fundMachine, paidExecution, type Svcd } from '../support/svcd.ts';
import { loadConfig } from '../../src/core/config.ts';

const DOC = (p: string) => new URL(`../../docs/${p}`, import.meta.url);

/** One scrape, parsed: every sample with its labels, and every family's declared type. */
interface Scrape {
  text: string;
  samples: { name: string; labels: Record<string, string>; value: number }[];
  types: Map<string, string>;
}

function parse(text: string): Scrape {
  const samples: Scrape['samples'] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) {
      if (types.has(type[1]!)) throw new Error(`family ${type[1]} declared twice`);
      types.set(type[1]!, type[2]!);
      continue;
    }
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return { text, samples, types };
}

/** The sum of the samples named `name` whose labels include `labels`. */
function sum(s: Scrape, name: string, labels: Record<string, string> = {}): number {
  return s.samples.filter((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v))
    .reduce((a, x) => a + x.value, 0);
}

/** Every metric name a scrape exposes, histograms with their _bucket, _sum and _count series. */
function exposedNames(s: Scrape): Set<string> {
  const names = new Set<string>();
  for (const [n, type] of s.types) {
    names.add(n);
    if (type === 'histogram') for (const x of ['_bucket', '_sum', '_count']) names.add(n + x);
  }
  return names;
}

async function scrape(s: Svcd): Promise<Scrape> {
  const res = await fetch(`http://${s.ready.metrics}/metrics`);
  if (res.status !== 200) throw new Error(`GET /metrics: ${res.status} ${await res.text()}`);
  if (!res.headers.get('content-type')?.startsWith('text/plain; version=0.0.4')) throw new Error('not the text format');
  return parse(await res.text());
}

test('SVC_METRICS_PORT: off unless set, loopback by default, never the HTTP port', (t) => {
  t.is(loadConfig({}).metricsPort, null);
  t.is(loadConfig({ SVC_METRICS_PORT: '9464' }).metricsPort, 9464);
  t.is(loadConfig({ SVC_METRICS_PORT: '9464' }).metricsHost, '127.0.0.1');
  t.is(loadConfig({ SVC_METRICS_PORT: '0', SVC_METRICS_HOST: '::1' }).metricsHost, '::1');
  t.throws(() => loadConfig({ SVC_METRICS_PORT: '8080' }), { message: /SVC_METRICS_PORT must differ/ });
  t.throws(() => loadConfig({ SVC_METRICS_PORT: '70000' }), { message: /SVC_METRICS_PORT must be an integer/ });
});

test.serial('a paid flow moves the counters; /metrics is on its own loopback listener, 404 on the gateway port',
  async (t) => {
    const s = await startSvcd(t, { SVC_METRICS_PORT: '0', SVC_RATE_PUBLIC_LOW: '40/60' });
    t.regex(s.ready.metrics!, /^127\.0\.0\.1:\d+$/);
    const base = s.ready.http!;
    t.not(new URL(base).port, s.ready.metrics!.split(':')[1]);

    // the public port has no such route, whatever the method
    for (const method of ['GET', 'HEAD', 'POST']) {
      const r = await httpFrom('127.0.0.1', base, method, '/metrics');
      t.is(r.status, 404, method);
      if (method !== 'HEAD') t.is(r.body.error.code, 'not_found');
    }
    // the metrics listener answers only GET/HEAD /metrics, in the ApiError shape otherwise
    const other = await httpFrom('127.0.0.1', `http://${s.ready.metrics}`, 'GET', '/api/v1/health');
    t.is(other.status, 404);
    t.is(other.body.error.code, 'not_found');
    const post = await httpFrom('127.0.0.1', `http://${s.ready.metrics}`, 'POST', '/metrics');
    t.is(post.status, 405);
    t.is(post.headers.allow, 'GET, HEAD');

    const before = await scrape(s);
    const exec = { route: '/api/v1/executions/get-pulse', method: 'POST', status: '200' };
    t.is(sum(before, 'svc_http_requests_total', exec), 0);

    // a paid GET_PULSE flow over HTTP (the in-process gateway calls the core directly)...
    const token = await fundMachine(s, 'metrics-m', 5);
    const auth = { authorization: `Bearer ${token}` };
    const q = await httpFrom('127.0.0.1', base, 'POST', '/api/v1/quotes/get-pulse',
      { machine_id: 'metrics-m', bits: 256 });
    t.is(q.status, 200, JSON.stringify(q.body));
    const quoteId = q.body.quote_id as string;
    const acc = await httpFrom('127.0.0.1', base, 'POST', `/api/v1/quotes/${quoteId}/accept`,
      { machine_id: 'metrics-m' }, auth);
    t.is(acc.status, 200, JSON.stringify(acc.body));
    const again = await httpFrom('127.0.0.1', base, 'POST', `/api/v1/quotes/${quoteId}/accept`,
      { machine_id: 'metrics-m' }, auth);
    t.is(again.status, 409); // quote_not_issued: an error outcome
    const ex = await httpFrom('127.0.0.1', base, 'POST', '/api/v1/executions/get-pulse',
      { machine_id: 'metrics-m', quote_id: quoteId }, auth);
    t.is(ex.status, 200, JSON.stringify(ex.body));
    // ...and one over the svc/1 edge, while its connection is open
    const edge = await s.edge();
    let during: Scrape;
    try {
      await paidExecution(edge, 'metrics-m', token, 'get-pulse', { bits: 256 });
      during = await scrape(s);
    } finally {
      edge.close();
    }
    // a rate-limit refusal, from an address of its own
    let refused = 0;
    for (let i = 0; i < 60 && !refused; i++) {
      const r = await httpFrom('127.0.0.9', base, 'GET', '/api/v1/health');
      if (r.status === 429) refused++;
    }
    t.is(refused, 1);
    const after = await scrape(s);

    const grew = (name: string, labels: Record<string, string> = {}) =>
      sum(after, name, labels) - sum(before, name, labels);
    // HTTP: by route template, never the raw path (the quote id is in no label)
    t.is(grew('svc_http_requests_total', exec), 1);
    t.is(grew('svc_http_request_duration_seconds_count', { route: exec.route, method: 'POST' }), 1);
    t.is(grew('svc_http_requests_total', { route: '/api/v1/quotes/:quote_id/accept', status: '409' }), 1);
    t.is(grew('svc_http_requests_total', { route: '/api/v1/health', status: '429' }), 1);
    t.false(after.text.includes(quoteId));
    // svc/1 commands by name, listener and outcome: the gateway's in process, the edge's, the admin's
    t.is(grew('svc_commands_total', { command: 'GET_PULSE', listener: 'gateway', outcome: 'ok' }), 1);
    t.is(grew('svc_commands_total', { command: 'GET_PULSE', listener: 'edge', outcome: 'ok' }), 1);
    t.is(grew('svc_commands_total', { command: 'ACCEPT_QUOTE', listener: 'gateway', outcome: 'quote_not_issued' }), 1);
    t.is(grew('svc_commands_total', { command: 'SETTLE_INVOICE', listener: 'admin', outcome: 'ok' }), 1);
    t.is(grew('svc_command_duration_seconds_count', { command: 'QUOTE' }), 2);
    // the ledger: every acknowledged money step is a synced batch, in a group commit
    t.true(grew('svc_ledger_batch_seconds_count', { sync: 'true' }) >= 5); // fund, settle, 2 accepts, 2 executions
    t.true(grew('svc_ledger_flush_seconds_count', { sync: 'true' }) >= 1);
    t.true(grew('svc_ledger_group_commit_batches_count') >= 1);
    // kernel jobs (pulse derivation and receipt hashing run in the pool, inline or on a worker)
    t.true(grew('svc_kernel_job_duration_seconds_count') >= 2);
    t.true(grew('svc_kernel_jobs_total', { outcome: 'ok' }) >= 2);
    t.is(sum(after, 'svc_kernel_pool_threads'), 1);
    t.is(sum(after, 'svc_kernel_pool_queue_depth'), 0);
    // quotes and invoices by state
    t.is(grew('svc_quote_transitions_total', { state: 'issued' }), 2);
    t.is(grew('svc_quote_transitions_total', { state: 'accepted' }), 2);
    t.is(grew('svc_quote_transitions_total', { state: 'executed' }), 2);
    t.is(grew('svc_invoice_transitions_total', { state: 'created' }), 1);
    t.is(grew('svc_invoice_transitions_total', { state: 'settled' }), 1);
    t.is(sum(after, 'svc_open_quotes'), 0);
    t.is(sum(after, 'svc_pending_invoices'), 0);
    // connections: the edge client was open during the scrape; rate limits by class and key
    t.true(sum(during!, 'svc_open_connections', { listener: 'edge' }) >= 1);
    t.true(grew('svc_connections_total', { listener: 'http' }) >= 1); // 127.0.0.9's, at least (keep-alive)
    t.is(grew('svc_rate_limited_total', { class: 'public_low', key: 'address' }), 1);
    // process metrics
    t.true(sum(after, 'process_resident_memory_bytes') > 0);
    t.true(after.types.has('nodejs_eventloop_lag_seconds'));
  });

test.serial('an accepted quote and a pending invoice show in the open gauges', async (t) => {
  const s = await startSvcd(t, { SVC_METRICS_PORT: '0' });
  const token = await fundMachine(s, 'open-m', 5);
  const c = await s.edge();
  try {
    const q = await c.request('QUOTE', { service: 'get-pulse', machine_id: 'open-m', bits: 64 });
    await c.request('ACCEPT_QUOTE', { quote_id: q.quote_id, machine_id: 'open-m' }, { token });
    await c.request('FUND_ACCOUNT', { machine_id: 'open-m', units: 1, network: 'TRON', asset: 'USDT' }, { token });
  } finally {
    c.close();
  }
  const m = await scrape(s);
  t.is(sum(m, 'svc_open_quotes'), 1);
  t.is(sum(m, 'svc_pending_invoices'), 1);
});

test.serial('K = 2 gateway workers: one scrape aggregates both workers\' HTTP metrics with the core\'s', async (t) => {
  const s = await startSvcd(t, { SVC_GATEWAY_PROCESSES: '2', SVC_METRICS_PORT: '0' });
  t.is(s.ready.gateway_processes, 2);
  const base = s.ready.http!;
  const gone = await httpFrom('127.0.0.1', base, 'GET', '/metrics', undefined, { connection: 'close' });
  t.is(gone.status, 404);
  const before = await scrape(s);
  t.is(sum(before, 'svc_metrics_workers', { state: 'reporting' }), 2);
  // every request on a new connection: round-robin spreads them over both workers
  const n = 20;
  for (let i = 0; i < n; i++) {
    const r = await httpFrom('127.0.0.1', base, 'GET', '/api/v1/health', undefined, { connection: 'close' });
    t.is(r.status, 200);
  }
  const after = await scrape(s);
  t.is(sum(after, 'svc_metrics_workers', { state: 'reporting' }), 2);
  t.is(sum(after, 'svc_metrics_workers', { state: 'missing' }), 0);
  const health = { route: '/api/v1/health', method: 'GET', status: '200' };
  // the sum over both workers: a worker left out would lose its share
  t.is(sum(after, 'svc_http_requests_total', health) - sum(before, 'svc_http_requests_total', health), n);
  t.true(sum(after, 'svc_connections_total', { listener: 'http' }) >= n + 1);
  // the core's side of the same requests: HEALTH over the backend, one family in one scrape
  const backend = { command: 'HEALTH', listener: 'backend', outcome: 'ok' };
  t.is(sum(after, 'svc_commands_total', backend) - sum(before, 'svc_commands_total', backend), n);
  // process metrics of the three processes, merged by prom-client's aggregators
  t.true(sum(after, 'process_resident_memory_bytes') > 0);

  // free quotes are answered by the workers themselves (core/quote-desk.ts): counted as the gateway's
  // QUOTE, never as a call on the backend; an idempotent one goes to the core
  const quotes = 10;
  for (let i = 0; i < quotes; i++) {
    const r = await httpFrom('127.0.0.1', base, 'POST', '/api/v1/quotes/get-pulse',
      { machine_id: 'metrics-m', bits: 64 }, { connection: 'close' });
    t.is(r.status, 200);
  }
  const keyed = await httpFrom('127.0.0.1', base, 'POST', '/api/v1/quotes/get-pulse',
    { machine_id: 'metrics-m', bits: 64, idempotency_key: 'metrics-k' }, { connection: 'close' });
  t.is(keyed.status, 200);
  const last = await scrape(s);
  const quote = (listener: string) => sum(last, 'svc_commands_total', { command: 'QUOTE', listener, outcome: 'ok' })
    - sum(after, 'svc_commands_total', { command: 'QUOTE', listener, outcome: 'ok' });
  t.is(quote('gateway'), quotes);
  t.is(quote('backend'), 1);
  t.is(sum(last, 'svc_quote_transitions_total', { state: 'issued' })
    - sum(after, 'svc_quote_transitions_total', { state: 'issued' }), quotes + 1);
});

test.serial('the sample Grafana dashboard names only metrics the scrape exposes; the docs describe every one',
  async (t) => {
    const s = await startSvcd(t, { SVC_METRICS_PORT: '0' });
    const m = await scrape(s);
    const exposed = exposedNames(m);
    const dash = JSON.parse(readFileSync(DOC('grafana-dashboard.json'), 'utf8'));
    const exprs: string[] = [];
    const walk = (v: unknown) => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) {
          if (k === 'expr' && typeof x === 'string') exprs.push(x);
          else walk(x);
        }
      }
    };
    walk(dash.panels);
    t.true(exprs.length >= 10, `${exprs.length} queries`);
    for (const e of exprs) {
      const names = [...e.matchAll(/\b((?:svc|process|nodejs)_[a-z0-9_]+)\b/g)].map((x) => x[1]!);
      t.true(names.length > 0, `no metric in ${e}`);
      for (const n of names) t.true(exposed.has(n), `${n} (in ${e}) is not in the scrape`);
    }
    // every svc_ family is documented in docs/operations.md "Metrics"
    const ops = readFileSync(DOC('operations.md'), 'utf8');
    const section = ops.slice(ops.indexOf('## Metrics'));
    for (const n of m.types.keys()) {
      if (n.startsWith('svc_')) t.true(section.includes(`\`${n}\``), `${n} is not in docs/operations.md "Metrics"`);
    }
  });

test.serial('svcd core and svcd gateway apart: each serves its own metrics on its own listener', async (t) => {
  const core = await startSvcd(t, { SVC_METRICS_PORT: '0' }, { args: ['core'] });
  t.is(core.ready.http, null);
  const gw = await startSvcd(t, { SVC_METRICS_PORT: '0', SVC_BACKEND_PORT: String(core.backendPort) },
    { args: ['gateway'] });
  t.not(gw.ready.metrics, core.ready.metrics);
  const health = { route: '/api/v1/health', method: 'GET', status: '200' };
  const backend = { command: 'HEALTH', listener: 'backend', outcome: 'ok' };
  const [g0, c0] = [await scrape(gw), await scrape(core)];
  const r = await httpFrom('127.0.0.1', gw.ready.http!, 'GET', '/api/v1/health');
  t.is(r.status, 200);
  const [g1, c1] = [await scrape(gw), await scrape(core)];
  t.is(sum(g1, 'svc_http_requests_total', health) - sum(g0, 'svc_http_requests_total', health), 1);
  t.is(sum(c1, 'svc_commands_total', backend) - sum(c0, 'svc_commands_total', backend), 1);
  t.is(sum(c1, 'svc_http_requests_total'), 0, 'the core alone serves no HTTP');
});
