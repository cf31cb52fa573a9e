// One client address cannot take a shared byte budget alone: holding HTTP
// bodies or unfinished svc/1 lines, it gets its share of the budget and 503 / busy past it, while
// another address's POST and its svc/1 line that arrives in pieces are still served. The budgets are
// made small here (4 MiB each, 2 MiB a share by default) so eight held connections pass the total.
import test from 'ava';
import { connect as netConnect } from 'node:net';
import { sharedSvcd } from '../support/start-svcd.ts';
import { until } from '../support/until.ts';
import { heldTcp, heldTls } from '../support/raw-wire.ts';

const MiB = 1 << 20;
const HOLDERS = 8; // × (1 MiB − 10 B) from one address: twice the 4 MiB total
const PART = MiB - 10;
const ATTACKER = '127.0.0.60';
const OTHER = '127.0.0.61';

// SVC_*_PER_ADDRESS_BYTES = the totals gives the behaviour before shares (and makes these tests fail)
const s = sharedSvcd(test, {
  SVC_BODY_BUDGET_BYTES: String(4 * MiB),
  SVC_LINE_BUDGET_BYTES: String(4 * MiB),
  SVC_HTTP_REQUEST_TIMEOUT_MS: '20000',
  SVC_LINE_TIMEOUT_MS: '20000',
  SVC_RATE_PUBLIC_LOW: '1000000/60',
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => /^SVC_\w+_PER_ADDRESS_BYTES$/.test(k))),
}) as ReturnType<typeof sharedSvcd>;

const tcp = heldTcp;
const tls = (localAddress: string) => heldTls(s.edgePort, localAddress);

test.serial('HTTP: one address holding bodies gets its share; another address\'s POST is served', async (t) => {
  const port = Number(new URL(s.ready.http!).port);
  const head = 'POST /api/v1/sandbox/quotes/get-pulse HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n'
    + `content-length: ${MiB}\r\n\r\n`;
  const holders = await Promise.all(Array.from({ length: HOLDERS }, () => tcp(port, ATTACKER)));
  for (const h of holders) h.socket.write(head + `{"machine_id":"${'a'.repeat(PART)}`.slice(0, PART));
  // those past a limit are answered at once, the rest wait for bytes that never come: once one is
  // answered the bytes are in, and what is held is what the attacker can hold
  await until('a holder past a limit is answered', () => holders.some((h) => h.data));
  await new Promise((r) => setTimeout(r, 300));
  const other = await fetchFrom(port, OTHER, { machine_id: `other-address-${'x'.repeat(80)}`, bits: 256 });
  t.is(other.status, 200, other.text);
  const refused = holders.filter((h) => h.data);
  t.true(refused.length >= HOLDERS - 2, `${refused.length} refused: at most 2 of (1 MiB − 10 B) fit a 2 MiB share`);
  for (const h of refused) {
    t.regex(h.data, /^HTTP\/1\.1 503/);
    t.regex(h.data, /"code":"busy".*this client address has its share of request bodies being read \(2097152 bytes\)/);
  }
  for (const h of holders) h.socket.destroy();
});

test.serial('svc/1 edge: one address holding unfinished lines gets its share; another\'s split line is served',
  async (t) => {
    const holders = await Promise.all(Array.from({ length: HOLDERS }, () => tls(ATTACKER)));
    const partial = `{"v":"svc/1","id":1,"cmd":"HELLO","args":{"nonce":"${'a'.repeat(PART)}`.slice(0, PART);
    for (const h of holders) h.socket.write(partial);
    await until('a holder past a limit is closed', () => holders.some((h) => h.closed));
    await new Promise((r) => setTimeout(r, 300));
    // a line of 60 kB (JSON whitespace) arrives in four writes: its unfinished part needs the budget
    const other = await tls(OTHER);
    const line = `{"v":"svc/1","id":7,"cmd":"HELLO","args":{"nonce":"other-address-1"}${' '.repeat(60_000)}}\n`;
    for (let i = 0; i < line.length; i += 16_000) {
      other.socket.write(line.slice(i, i + 16_000));
      await new Promise((r) => setTimeout(r, 20));
    }
    await until('the other address is answered', () => other.data.includes('\n') || other.closed);
    const reply = JSON.parse(other.data.split('\n')[0]!) as { id: number; ok: boolean; error?: unknown };
    t.is(reply.id, 7);
    t.true(reply.ok, JSON.stringify(reply.error ?? null));
    const refused = holders.filter((x) => x.closed);
    t.true(refused.length >= HOLDERS - 2, `${refused.length} refused: at most 2 of (1 MiB − 10 B) fit a 2 MiB share`);
    for (const h of refused) {
      const first = JSON.parse(h.data.split('\n')[0]!) as { error: { code: string; message: string } };
      t.is(first.error.code, 'busy');
      t.regex(first.error.message, /this client address holds its share of unfinished lines \(2097152 bytes\)/);
    }
    for (const h of [...holders, other]) h.socket.destroy();
  });

/** A POST of `body` from `localAddress` (fetch cannot choose its source address). */
function fetchFrom(port: number, localAddress: string, body: unknown): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const socket = netConnect({ host: '127.0.0.1', port, localAddress }, () => {
      socket.write('POST /api/v1/sandbox/quotes/get-pulse HTTP/1.1\r\nHost: x\r\nConnection: close\r\n'
        + `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
    });
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => { data += d; });
    socket.on('error', reject);
    socket.on('close', () => resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(data)?.[1] ?? 0), text: data }));
  });
}
