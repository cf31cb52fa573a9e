import test from 'ava';
import { createHash } from 'node:crypto';
import { KernelPool, Kernels } from '../../src/kernels/index.ts';
import { assemble } from '../../src/kernels/bvm-assembler.ts';
import { hex, prng, utf8 } from '../helpers.ts';

const inline = Kernels.create();
const spin = assemble('l: jmp l').image;

test('pool: every op gives the same bytes on a worker as inline', async (t) => {
  const pool = new KernelPool({ threads: 2 });
  t.teardown(() => pool.close());
  const r = prng(11);
  const data = r.bytes(100_000), key = r.bytes(32), nonce = r.bytes(24), aad = r.bytes(9);
  const leaves = Array.from({ length: 33 }, (_, i) => inline.merkleLeafHash(Uint8Array.of(i)));
  const image = assemble('.memory 4\ninlen\nout8\nhalt').image;
  for (const route of ['worker', 'inline'] as const) {
    t.is(hex(await pool.run('sha256', [data], { route })), createHash('sha256').update(data).digest('hex'));
    t.is(hex(await pool.run('hmacSha256', [key, data], { route })), hex(inline.hmacSha256(key, data)));
    const sealed = await pool.run('xchachaSeal', [key, nonce, data, aad], { route });
    t.is(hex(sealed), hex(inline.xchachaSeal(key, nonce, data, aad)));
    t.is(hex((await pool.run('xchachaOpen', [key, nonce, sealed, aad], { route }))!), hex(data));
    t.is(await pool.run('xchachaOpen', [key, nonce, sealed.subarray(1), aad], { route }), null);
    t.is(hex(await pool.run('merkleRoot', [leaves], { route })), hex(inline.merkleRoot(leaves)));
    t.is(
      hex(await pool.run('pulseExpand', [key, utf8('ctx'), 65536], { route })),
      hex(inline.pulseExpand(key, utf8('ctx'), 65536)),
    );
    const b = await pool.run('bvmRun', [image, utf8('abc'), { fuel: 10, maxOutput: 4 }], { route });
    t.deepEqual({ ...b, output: hex(b.output) }, { status: 'halted', halted: true, steps: 3, pc: 2, output: '03' });
  }
});

test('pool: argument errors come back as the same ServiceError code and message from a worker', async (t) => {
  const pool = new KernelPool({ threads: 1 });
  t.teardown(() => pool.close());
  const e = await t.throwsAsync(
    pool.run('pulseExpand', [new Uint8Array(1), new Uint8Array(0), 0], { route: 'worker' }),
  );
  t.is((e as any).code, 'invalid_request');
  t.regex(e!.message, /bits must be an integer/);
});

test('pool: a full queue fails fast with busy, and the pool keeps working after', async (t) => {
  const pool = new KernelPool({ threads: 1, maxQueue: 2 });
  t.teardown(() => pool.close());
  await pool.run('sha256', [new Uint8Array(1)], { route: 'worker' }); // warm: the worker is up
  const ac = new AbortController();
  const running = [0, 1, 2].map(() => pool.run(
    'bvmRun',
    [spin, new Uint8Array(0), { fuel: 400_000_000, maxOutput: 0 }],
    { route: 'worker', signal: ac.signal },
  ).catch((e) => e));
  const e = await t.throwsAsync(pool.run('sha256', [new Uint8Array(1)], { route: 'worker' }));
  t.is((e as any).code, 'busy');
  ac.abort();
  for (const r of await Promise.all(running)) t.is(r.code, 'cancelled');
  t.is(
    hex(await pool.run('sha256', [new Uint8Array(1)], { route: 'worker' })),
    createHash('sha256').update(Buffer.alloc(1)).digest('hex'),
  );
});

test('pool: cancelling a running job stops it (the worker is replaced) and frees the thread', async (t) => {
  const pool = new KernelPool({ threads: 1 });
  t.teardown(() => pool.close());
  const ac = new AbortController();
  const started = Date.now();
  const job = pool.run(
    'bvmRun',
    [spin, new Uint8Array(0), { fuel: 0xffff_ffff, maxOutput: 0 }],
    { route: 'worker', signal: ac.signal },
  );
  setTimeout(() => ac.abort(), 100);
  const e = await t.throwsAsync(job);
  t.is((e as any).code, 'cancelled');
  t.true(Date.now() - started < 5000, 'stopped long before its fuel ran out');
  const b = await pool.run('bvmRun', [spin, new Uint8Array(0), { fuel: 1000, maxOutput: 0 }], { route: 'worker' });
  t.is(b.status, 'out_of_fuel');
  const pre = new AbortController(); pre.abort();
  t.is(
    ((await t.throwsAsync(pool.run('sha256', [new Uint8Array(1)], { signal: pre.signal }))) as any).code,
    'cancelled',
  );
});

test('pool: a crashed worker is replaced; its job fails with kernel_failed, later jobs succeed', async (t) => {
  const pool = new KernelPool({ threads: 2, testOps: true });
  t.teardown(() => pool.close());
  const e = await t.throwsAsync(pool._runTestOp('__exit'));
  t.is((e as any).code, 'kernel_failed');
  const results = await Promise.all(
    Array.from({ length: 8 }, (_, i) => pool.run('sha256', [Uint8Array.of(i)], { route: 'worker' })),
  );
  t.is(results.length, 8);
  t.is(pool.threads, 2);
});

test('pool: transferInputs moves whole buffers to the worker instead of copying', async (t) => {
  const pool = new KernelPool({ threads: 1 });
  t.teardown(() => pool.close());
  const data = new Uint8Array(1 << 20).fill(3);
  const want = createHash('sha256').update(data).digest('hex');
  t.is(hex(await pool.run('sha256', [data], { route: 'worker', transferInputs: true })), want);
  t.is(data.byteLength, 0, 'the caller\'s view is detached: the bytes moved');
});

test('pool: routing sends tiny jobs inline and large ones to workers', async (t) => {
  const pool = new KernelPool({ threads: 1 });
  t.teardown(() => pool.close());
  t.true(pool.routesInline('sha256', [new Uint8Array(64)]));
  t.false(pool.routesInline('sha256', [new Uint8Array(1 << 20)]));
  t.true(pool.routesInline('pulseExpand', [new Uint8Array(32), new Uint8Array(8), 256]));
  t.false(pool.routesInline('bvmRun', [spin, new Uint8Array(0), { fuel: 1_000_000, maxOutput: 0 }]));
  const before = pool.completed;
  await pool.run('sha256', [new Uint8Array(64)]);
  t.is(pool.completed, before, 'the 64-byte hash did not touch a worker');
  await pool.run('sha256', [new Uint8Array(1 << 20)]);
  t.is(pool.completed, before + 1);
});

test('pool: a closed pool refuses work with busy', async (t) => {
  const pool = new KernelPool({ threads: 1 });
  await pool.close();
  t.is(((await t.throwsAsync(pool.run('sha256', [new Uint8Array(1)]))) as any).code, 'busy');
});

test('pool: when workers are busy, high-priority jobs run before normal ones'
  + ' and low ones wait behind both', async (t) => {
  const pool = new KernelPool({ threads: 1, maxQueue: 16 });
  t.teardown(() => pool.close());
  await pool.run('sha256', [new Uint8Array(1)], { route: 'worker' });
  const order: string[] = [];
  const blocker = pool.run(
    'bvmRun',
    [spin, new Uint8Array(0), { fuel: 30_000_000, maxOutput: 0 }],
    { route: 'worker' },
  );
  const jobs = (['low', 'normal', 'high', 'low', 'high', 'normal'] as const).map((p, i) =>
    pool.run('sha256', [Uint8Array.of(i)], { route: 'worker', priority: p }).then(() => order.push(p)));
  await blocker;
  await Promise.all(jobs);
  t.deepEqual(order, ['high', 'high', 'normal', 'normal', 'low', 'low']);
});
