// Stock clients against the default connection caps (64 per address): 200 concurrent paid flows from
// one address through Node's own fetch (undici, no socket limit: one connection per request in flight),
// and 200 requests through `curl --parallel`. No transport error: a connection over the cap waits for a
// slot or is answered 429 with Retry-After, never closed silently; the money of the paid flows is exact.
import test from 'ava';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSvcd } from '../support/start-svcd.ts';
import { BIN, fundMachine, runBin } from '../support/svcd.ts';
import { QUOTE } from '../ops/flows.ts';

const N = 200;

interface Met { status?: number; code?: string; retryAfter?: string | null; error?: string }

async function post(url: string, body: unknown, token?: string): Promise<Met & { json?: any }> {
  try {
    const r = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    const json = await r.json() as any;
    return { status: r.status, code: json?.error?.code, retryAfter: r.headers.get('retry-after'), json };
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    return { error: cause?.code ?? cause?.message ?? String(e) };
  }
}

/** 200, or 429/503 with Retry-After: what a caller can act on. */
const actionable = (m: Met) => m.status === 200
  || ((m.status === 429 || m.status === 503) && m.retryAfter !== null && m.retryAfter !== undefined);

test('200 concurrent paid flows from one address through fetch: no transport error, every answer 200 or '
  + '429/503 with Retry-After, money exact', async (t) => {
  t.timeout(300_000);
  const s = await startSvcd(t, { SVC_GATEWAY_PROCESSES: '2' });
  const base = s.ready.http!;
  const machine = 'stock-fetch';
  const token = await fundMachine(s, machine, 100);
  const met: Met[] = [];
  let executed = 0;
  const flow = async () => {
    const q = await post(`${base}/api/v1/quotes/${QUOTE.service}`, { ...QUOTE, machine_id: machine });
    met.push(q);
    if (q.status !== 200) return;
    const a = await post(`${base}/api/v1/quotes/${q.json.quote_id}/accept`, { machine_id: machine }, token);
    met.push(a);
    if (a.status !== 200) return;
    const e = await post(`${base}/api/v1/executions/attest-event`,
      { quote_id: q.json.quote_id, machine_id: machine, plain_hex: '00' }, token);
    met.push(e);
    if (e.status === 200) executed++;
  };
  await Promise.all(Array.from({ length: N }, flow));
  const errors = met.filter((m) => m.error).map((m) => m.error);
  t.deepEqual(errors, [], 'no transport error');
  const odd = met.filter((m) => !actionable(m)).map((m) => `${m.status} ${m.code}`);
  t.deepEqual(odd, [], 'every answer 200, or 429/503 with Retry-After');
  const counts = new Map<string, number>();
  for (const m of met) {
    const k = `${m.status} ${m.code ?? ''}`.trim();
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  t.log(`${met.length} answers: ${[...counts].map(([k, v]) => `${k} × ${v}`).join(', ')}; ${executed} flows executed`);

  t.is(await s.stop(), 0);
  const audit = await runBin(BIN.svcd, ['audit', '--json'], { SVC_DATA_DIR: s.dataDir });
  const report = JSON.parse(audit.stdout);
  t.true(report.clean, report.discrepancies.join('\n'));
  const m = report.machines.find((x: { machine_id: string }) => x.machine_id === machine);
  t.is(BigInt(m.available_units) + BigInt(m.reserved_units) + BigInt(m.spent_units), BigInt(m.credited_units));
  t.is(report.totals.receipts, executed, 'one receipt per execution answered 200');
});

test('200 requests through curl --parallel from one address: curl reports no transport error; each answer 200, '
  + 'or 429 with Retry-After', async (t) => {
  t.timeout(120_000);
  const s = await startSvcd(t, { SVC_HTTP_MAX_CONNECTIONS_PER_ADDRESS: '16' });
  const url = `${s.ready.http!}/api/v1/quotes/get-pulse`;
  const config = join(s.dataDir, 'curl.conf');
  // one request per entry, each on a connection of its own that closes after its answer (so the ones over
  // the cap of 16 wait for a slot and are served); -w prints status and Retry-After per transfer
  writeFileSync(config, Array.from({ length: N }, (_, i) => [
    `url = "${url}"`, 'request = "POST"', 'header = "content-type: application/json"', 'header = "connection: close"',
    `data = "{\\"machine_id\\":\\"curl-${i}\\",\\"bits\\":64}"`, 'output = "/dev/null"',
    'write-out = "%{http_code} %header{retry-after}\\n"',
  ].join('\n')).join('\nnext\n'));
  const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const p = spawn('curl', ['--silent', '--show-error', '--parallel', '--parallel-max', String(N),
      '--parallel-immediate', '--config', config]);
    let stdout = '', stderr = '';
    p.stdout.on('data', (d) => { stdout += d; });
    p.stderr.on('data', (d) => { stderr += d; });
    p.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  t.is(out.code, 0, `curl exit code (transport errors: ${out.stderr})`);
  const lines = out.stdout.trim().split('\n');
  t.is(lines.length, N);
  const odd = lines.filter((l) => !/^200 ?$/.test(l) && !/^(429|503) 1$/.test(l));
  t.deepEqual(odd, [], 'each 200, or 429/503 with Retry-After: 1');
  const refused = lines.filter((l) => l.startsWith('429')).length;
  t.log(`curl: ${N - refused} × 200, ${refused} × 429 (16 connections per address, the rest waited)`);
});
