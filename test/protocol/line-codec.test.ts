// The svc/1 line decoder, alone and under a shared byte budget: the same lines whatever the chunking,
// an unfinished line held up to the limit only, the budget charged exactly what is held and given all
// of it back, refusal when it is spent, and a one-byte-at-a-time peer costing bytes rather than an
// allocation per byte.
import test from 'ava';
import fc from 'fast-check';
import { ByteBudget } from '../../src/protocol/budgets.ts';
import { once } from 'node:events';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { LineDecoder, encodeLine, lineWriter } from '../../src/protocol/line-codec.ts';

test('LineDecoder, with a budget and without: any chunking gives the lines of the whole, and every byte held '
  + 'goes back (property)', (t) => {
  const lineList = fc.array(fc.string({ maxLength: 3000 }).filter((x) => !x.includes('\n')), { maxLength: 12 });
  fc.assert(fc.property(lineList, fc.array(fc.nat(5000), { maxLength: 30 }), (lines, cuts) => {
    const budget = new ByteBudget(1 << 20);
    const whole = Buffer.from(lines.map((l) => `${l}\n`).join(''));
    const d = new LineDecoder(1 << 20, budget);
    const free = new LineDecoder(1 << 20);
    const got: string[] = [];
    const gotFree: string[] = [];
    let at = 0;
    for (const c of [...cuts, whole.length]) {
      const end = Math.min(whole.length, at + c);
      got.push(...d.push(whole.subarray(at, end)).lines);
      gotFree.push(...free.push(whole.subarray(at, end)).lines);
      if (budget.used !== d.held) return false;
      at = end;
    }
    const want = JSON.stringify(lines);
    return JSON.stringify(got) === want && JSON.stringify(gotFree) === want && budget.used === 0
      && d.pending === 0 && free.pending === 0;
  }), { numRuns: 500 });
  t.pass();
});

test('LineDecoder: an unfinished line never holds more than the limit', (t) => {
  const d = new LineDecoder(100);
  t.false(d.push(Buffer.alloc(60, 0x61)).overflow);
  t.true(d.push(Buffer.alloc(41, 0x61)).overflow);
  const d2 = new LineDecoder(100);
  t.deepEqual(d2.push(Buffer.from(`${'a'.repeat(100)}\nb`)), { lines: ['a'.repeat(100)], overflow: false });
});

test('LineDecoder with a budget: a decoder the budget cannot cover is refused; disposing gives the bytes back', (t) => {
  const budget = new ByteBudget(200_000);
  const a = new LineDecoder(1 << 20, budget);
  const b = new LineDecoder(1 << 20, budget);
  t.deepEqual(a.push(Buffer.alloc(150_000, 0x61)), { lines: [], overflow: false });
  t.true(budget.used >= 150_000 && budget.used <= 200_000, `${budget.used} held for 150,000 bytes`);
  t.deepEqual(b.push(Buffer.alloc(100_000, 0x61)), { lines: [], overflow: false, overBudget: true });
  a.dispose();
  b.dispose();
  t.is(budget.used, 0);
  t.deepEqual(b.push(Buffer.alloc(100_000, 0x61)), { lines: [], overflow: false }, 'room again');
});

test('LineDecoder: one byte at a time holds about the bytes, not an allocation per byte', (t) => {
  const d = new LineDecoder();
  for (let i = 0; i < 300_000; i++) d.push(Buffer.of(0x61));
  t.is(d.pending, 300_000);
  t.true(d.held <= 300_000 + 64 * 1024, `${d.held} bytes held for 300,000`);
  const { lines } = d.push(Buffer.from('b\n'));
  t.is(lines[0], `${'a'.repeat(300_000)}b`);
});

test('LineDecoder.nextLine splits one line at a time: what is not asked for stays input, as bytes', (t) => {
  const d = new LineDecoder();
  d.feed(Buffer.from('a\nbb\ncc'));
  d.feed(Buffer.from('c\r\n'));
  t.deepEqual(d.nextLine(), { line: 'a' });
  t.true(d.hasInput, 'the rest waits unsplit');
  t.is(d.pending, 0);
  t.deepEqual(d.nextLine(), { line: 'bb' });
  t.deepEqual(d.nextLine(), { line: 'ccc' }, 'a line across chunks, CRLF tolerated');
  t.is(d.nextLine(), null);
  t.false(d.hasInput);
  d.feed(Buffer.alloc(10, 0x61));
  t.is(d.nextLine(), null);
  t.is(d.pending, 10, 'the unfinished tail is held');
  const small = new LineDecoder(4);
  small.feed(Buffer.from('ok\ntoo long\n'));
  t.deepEqual([small.nextLine(), small.nextLine()], [{ line: 'ok' }, { fault: 'line_too_long' }]);
});

test('LineDecoder: an empty chunk is no input; dispose drops the rest of a chunk half split, and the line held',
  (t) => {
  const d = new LineDecoder();
  d.feed(Buffer.alloc(0));
  t.false(d.hasInput);
  t.is(d.nextLine(), null);
  d.feed(Buffer.from('ab\ncd\nef'));
  t.deepEqual(d.nextLine(), { line: 'ab' });
  d.dispose();
  t.false(d.hasInput);
  t.is(d.pending, 0);
  d.feed(Buffer.from('xy\n'));
  t.deepEqual(d.nextLine(), { line: 'xy' }, 'the next input is read from its start');
  d.feed(Buffer.from('held'));
  t.is(d.nextLine(), null);
  d.dispose();
  t.deepEqual([d.pending, d.held], [0, 0]);
  t.deepEqual(d.push(Buffer.from('new\n')), { lines: ['new'], overflow: false }, 'nothing of the held line is left');
  t.deepEqual(new LineDecoder().push(Buffer.from('\n\r\n')), { lines: ['', ''], overflow: false }, 'empty lines');
});

test('encodeLine: one JSON object and its newline', (t) => {
  t.is(encodeLine({ a: 1, b: 'x\n' }), '{"a":1,"b":"x\\n"}\n');
});

test('LineDecoder: the blocks held never pass the line limit; nextLine names a budget refusal over_budget', (t) => {
  const d = new LineDecoder(1500);
  d.push(Buffer.alloc(1500, 0x61));
  t.deepEqual([d.pending, d.held], [1500, 1500], 'a 1 KiB block, then only the 476 bytes the limit leaves');
  const budget = new ByteBudget(100);
  const b = new LineDecoder(1 << 20, budget);
  b.feed(Buffer.alloc(10, 0x61));
  t.deepEqual(b.nextLine(), { fault: 'over_budget' });
});

test('lineWriter: the lines written in one turn go to the kernel in one write, the next turn\'s in another',
  async (t) => {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const received: Buffer[] = [];
    server.on('connection', (s: Socket) => s.on('data', (b: Buffer) => received.push(b)));
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    await once(socket, 'connect');
    // the stream hands the kernel one writev per uncork (several chunks) or one write per chunk
    const calls: number[] = [];
    const s = socket as unknown as { _writev: (chunks: unknown[], cb: () => void) => void; _write: unknown };
    const writev = s._writev.bind(socket);
    s._writev = (chunks, cb) => { calls.push(chunks.length); writev(chunks, cb); };
    const single = (socket as unknown as { _write: (c: unknown, e: string, cb: () => void) => void })._write;
    s._write = (c: unknown, e: string, cb: () => void) => { calls.push(1); single.call(socket, c, e, cb); };
    const write = lineWriter(socket);
    for (let i = 0; i < 5; i++) write(`line ${i}\n`);
    t.deepEqual(calls, [], 'nothing before the turn ends');
    await new Promise((r) => setImmediate(r));
    t.deepEqual(calls, [5]);
    write('again\n');
    await new Promise((r) => setImmediate(r));
    t.deepEqual(calls, [5, 1]);
    socket.end();
    await new Promise((r) => setTimeout(r, 50));
    t.is(Buffer.concat(received).toString(), 'line 0\nline 1\nline 2\nline 3\nline 4\nagain\n');
    server.close();
  });
