// Load generation for the service bench: autocannon, in this process, against servers in others.
// Free quotes are one request; a paid flow is quote → accept → execute chained per connection, each
// connection with its own funded machine (svcd serialises a machine's money steps). Latency is ours,
// not autocannon's histogram, which keeps whole milliseconds only: per request, the time from writing
// it to its last byte (autocannon's responseTime, float ms); per flow, the sum of its three requests.
import autocannon, { type Client, type Request, type Result } from 'autocannon';

export interface LoadResult {
  /** completed units per second: requests (free) or flows whose three requests all answered 2xx (paid) */
  rate: number;
  /** HTTP requests answered per second, any status */
  reqPerSec: number;
  p50: number;
  p99: number;
  /** connection errors and timeouts (autocannon) */
  errors: number;
  non2xx: number;
  /** units completed (rate × seconds) */
  count: number;
  seconds: number;
}

export interface Machine {
  id: string;
  token: string;
}

/** Either a duration (ms) or a fixed number of units (requests or flows). */
export type Amount = { ms: number } | { units: number };

const JSON_HEADERS = { 'content-type': 'application/json' };

/** The free quote both the bench and the profile load: a 256-bit GET_PULSE quote. */
export const QUOTE_PATH = '/api/v1/quotes/get-pulse';
export const QUOTE_BODY = { machine_id: 'm1', bits: 256 };

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

function run(opts: Parameters<typeof autocannon>[0], onInstance: (i: ReturnType<typeof autocannon>) => void) {
  return new Promise<{ result: Result; seconds: number }>((resolve, reject) => {
    const t0 = performance.now();
    // sampleInt: autocannon checks for the end once per sample, 1 s by default: a short run would last 1 s
    const instance = autocannon({ timeout: 30, sampleInt: 100, ...opts }, (err, result) => {
      if (err) reject(err);
      else resolve({ result, seconds: (performance.now() - t0) / 1000 });
    });
    onInstance(instance);
  });
}

const sizing = (a: Amount) => ('ms' in a ? { duration: a.ms / 1000 } : {});

/** Free quotes (or any one POST) at `c` connections. */
export async function loadRequests(
  url: string, path: string, body: unknown, c: number, a: Amount,
): Promise<LoadResult> {
  const lat: number[] = [];
  let non2xx = 0;
  const { result, seconds } = await run({
    url: `${url}${path}`,
    connections: c,
    method: 'POST',
    headers: JSON_HEADERS,
    body: JSON.stringify(body),
    ...sizing(a),
    ...('units' in a ? { amount: a.units } : {}),
  }, (inst) => inst.on('response', (_client: Client, status: number, _bytes: number, ms: number) => {
    lat.push(ms);
    if (status < 200 || status > 299) non2xx++;
  }));
  lat.sort((x, y) => x - y);
  const ok = lat.length - non2xx;
  return {
    rate: ok / seconds,
    reqPerSec: lat.length / seconds,
    p50: percentile(lat, 0.5),
    p99: percentile(lat, 0.99),
    errors: result.errors,
    non2xx,
    count: ok,
    seconds,
  };
}

/** The three requests of one paid GET_PULSE flow, for one connection and its machine. */
function flowRequests(
  m: Machine, onFlow: (ms: number, ok: boolean) => void, client: Client, bits: number,
): Request[] {
  const headers = { ...JSON_HEADERS, authorization: `Bearer ${m.token}` };
  let quoteId = 'none';
  let step = 0;
  let sum = 0;
  let ok = true;
  client.on('response', (status: number, _bytes: number, ms: number) => {
    sum += ms;
    if (status < 200 || status > 299) ok = false;
    if (step === 2) onFlow(sum, ok);
  });
  return [
    {
      method: 'POST',
      path: '/api/v1/quotes/get-pulse',
      headers: JSON_HEADERS,
      body: JSON.stringify({ machine_id: m.id, bits }),
      setupRequest: (r) => {
        step = 0;
        sum = 0;
        ok = true;
        quoteId = 'none';
        return r;
      },
      onResponse: (_status, body) => {
        quoteId = /"quote_id":"([^"]+)"/.exec(body)?.[1] ?? 'none';
      },
    },
    {
      method: 'POST',
      headers,
      body: JSON.stringify({ machine_id: m.id }),
      setupRequest: (r) => {
        step = 1;
        return { ...r, path: `/api/v1/quotes/${quoteId}/accept` };
      },
    },
    {
      method: 'POST',
      path: '/api/v1/executions/get-pulse',
      headers,
      setupRequest: (r) => {
        step = 2;
        return { ...r, body: JSON.stringify({ machine_id: m.id, quote_id: quoteId }) };
      },
    },
  ];
}

/**
 * Paid GET_PULSE flows at `c` connections spread over `urls` (autocannon assigns connection i to
 * urls[i % n]); connection i uses machines[i % machines.length].
 */
export async function loadFlows(
  urls: string[], machines: Machine[], c: number, a: Amount, bits = 256,
): Promise<LoadResult> {
  const lat: number[] = [];
  let requests = 0;
  let next = 0;
  // a flow with a non-2xx step is counted in non2xx, not in the rate or the latency
  const onFlow = (ms: number, ok: boolean) => {
    if (ok) lat.push(ms);
  };
  const { result, seconds } = await run({
    url: urls,
    connections: c,
    ...sizing(a),
    ...('units' in a ? { amount: a.units * 3 } : {}),
    setupClient: (client) => {
      const m = machines[next++ % machines.length]!;
      client.setRequests(flowRequests(m, onFlow, client, bits));
    },
  }, (inst) => inst.on('response', () => { requests++; }));
  lat.sort((x, y) => x - y);
  return {
    rate: lat.length / seconds,
    reqPerSec: requests / seconds,
    p50: percentile(lat, 0.5),
    p99: percentile(lat, 0.99),
    errors: result.errors,
    non2xx: result.non2xx,
    count: lat.length,
    seconds,
  };
}
