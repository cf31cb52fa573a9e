import test from 'ava';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { BVM_STATUS, Kernels } from '../../src/kernels/index.ts';
import { assemble, buildImage, disassemble } from '../../src/kernels/bvm-assembler.ts';
import { IMM_BYTES, ISA } from '../../src/kernels/bvm-isa.ts';
import { runReference } from '../reference/bvm-ref.ts';
import { hex, prng, utf8 } from '../helpers.ts';

const k = Kernels.create();
const FUEL = 100_000;

function run(src: string, input: Uint8Array = new Uint8Array(0), fuel = FUEL, maxOutput = 256) {
  const { image } = assemble(src);
  const got = k.bvmRun(image, input, { fuel, maxOutput });
  const ref = runReference(image, input, fuel, maxOutput);
  // every run in this file is also a differential check against the reference interpreter
  if (got.status !== ref.status || got.steps !== ref.steps || got.pc !== ref.pc
    || hex(got.output) !== hex(ref.output)) {
    throw new Error(`wasm/ref disagree on:\n${src}\nwasm=${JSON.stringify({ ...got, output: hex(got.output) })}`
      + `\nref=${JSON.stringify({ ...ref, output: hex(ref.output) })}`);
  }
  return got;
}
/** Runs `body`, then outputs the top of stack as 4 LE bytes. */
function top(body: string): number {
  const r = run(`.memory 4\n${body}\npush8 0\nswap\nstore32\npush8 0\npush8 4\noutcopy\nhalt`);
  if (r.status !== 'halted') throw new Error(`trapped: ${r.status}`);
  return Buffer.from(r.output).readInt32LE(0);
}

test('BVM opcodes: stack manipulation', (t) => {
  t.is(top('push 123456789'), 123456789);
  t.is(top('push8 -5'), -5);
  t.is(top('push 1\npush 2\npop'), 1);
  t.is(top('push 7\ndup\nadd'), 14);
  t.is(top('push 1\npush 2\nswap\nsub'), 1);
  t.is(top('push 10\npush 3\nover\nsub\nsub'), 17); // 10 3 10 → 10 -7 → 17
  t.is(top('push 1\npush 2\npush 3\npick 2'), 1);
  t.is(top('push 1\npush 2\npush 3\npick 0'), 3);
  t.is(top('nop\npush 4'), 4);
});

test('BVM opcodes: arithmetic wraps mod 2^32; division and remainder are defined at the edges', (t) => {
  t.is(top('push 0x7fffffff\npush 1\nadd'), -2147483648);
  t.is(top('push -2147483648\npush 1\nsub'), 2147483647);
  t.is(top('push 65536\npush 65536\nmul'), 0);
  t.is(top('push 123456\npush 654321\nmul'), Math.imul(123456, 654321));
  t.is(top('push -7\npush 2\ndiv_s'), -3);
  t.is(top('push -7\npush 2\ndiv_u'), ((-7 >>> 0) / 2) | 0);
  t.is(top('push -7\npush 2\nrem_s'), -1);
  t.is(top('push -7\npush 2\nrem_u'), 1);
  t.is(top('push -2147483648\npush -1\ndiv_s'), -2147483648, 'INT_MIN / -1 wraps, does not trap');
  t.is(top('push -2147483648\npush -1\nrem_s'), 0);
  t.is(top('push 0xf0f0\npush 0xff00\nand'), 0xf000);
  t.is(top('push 0xf0f0\npush 0xff00\nor'), 0xfff0);
  t.is(top('push 0xf0f0\npush 0xff00\nxor'), 0x0ff0);
  t.is(top('push 1\npush 33\nshl'), 2, 'shift counts are mod 32');
  t.is(top('push -8\npush 1\nshr_s'), -4);
  t.is(top('push -8\npush 1\nshr_u'), 0x7ffffffc);
  t.is(top('push 0x80000001\npush 1\nrotl'), 3);
  t.is(top('push 3\npush 1\nrotr'), -2147483647);
  t.is(top('push 0\nnot'), -1);
  t.is(top('push 5\nneg'), -5);
  t.is(top('push -2147483648\nneg'), -2147483648);
});

test('BVM opcodes: comparisons are signed or unsigned as named', (t) => {
  const cmp = (op: string, a: number, b: number) => top(`push ${a}\npush ${b}\n${op}`);
  t.is(cmp('eq', 3, 3), 1); t.is(cmp('ne', 3, 3), 0);
  t.is(cmp('lt_s', -1, 1), 1); t.is(cmp('lt_u', -1, 1), 0);
  t.is(cmp('gt_s', -1, 1), 0); t.is(cmp('gt_u', -1, 1), 1);
  t.is(cmp('le_s', 2, 2), 1); t.is(cmp('le_u', 3, 2), 0);
  t.is(cmp('ge_s', -5, -5), 1); t.is(cmp('ge_u', 0, -1), 0);
  t.is(top('push 0\neqz'), 1); t.is(top('push 9\neqz'), 0);
});

test('BVM opcodes: jumps, calls, returns', (t) => {
  t.is(top('push 1\njmp skip\npush 99\nskip: push 2\nadd'), 3);
  t.is(top('push 0\njz yes\npush 5\njmp end\nyes: push 6\nend: nop'), 6);
  t.is(top('push 1\njnz yes\npush 5\njmp end\nyes: push 6\nend: nop'), 6);
  t.is(top('push 0\njnz yes\npush 5\njmp end\nyes: push 6\nend: nop'), 5);
  t.is(top('call f\njmp end\nf: push 42\nret\nend: nop'), 42);
});

test('BVM opcodes: memory, input and output', (t) => {
  t.is(top('.memory 8\n.data 4 hex:78563412\npush 4\nload32'), 0x12345678);
  t.is(top('.memory 8\n.data 5 0xab\npush 5\nload8'), 0xab);
  t.is(top('push 2\npush 0x1ff\nstore8\npush 2\nload8'), 255, 'store8 keeps the low byte');
  const r = run(
    '.memory 16\npush 0\npush 1\ninlen\npush 1\nsub\nincopy\n'
      + 'push 0\ninlen\npush 1\nsub\noutcopy\ninlen\nout8\npush 0\ninload8\nout8\nhalt',
    utf8('hello'),
  );
  t.is(r.status, 'halted');
  t.is(Buffer.from(r.output).toString('latin1'), 'ello\x05h');
  const h = run('.memory 64\n.data 0 "abc"\npush 32\npush 0\npush 3\nsha256\npush 32\npush 32\noutcopy\nhalt');
  t.is(hex(h.output), createHash('sha256').update('abc').digest('hex'));
});

test('BVM: fuel accounting is exact (1 per instruction, bulk ops by 64-byte chunk, sha256 by block)', (t) => {
  t.is(run('nop\nnop\nhalt').steps, 3);
  t.is(run('.memory 200\npush 0\npush 130\noutcopy\nhalt', new Uint8Array(0), FUEL, 300).steps, 2 + (1 + 3) + 1);
  t.is(run('.memory 200\npush 100\npush 0\npush 56\nsha256\nhalt').steps, 3 + (1 + 8 * 2) + 1);
  t.is(run('.memory 200\npush 100\npush 0\npush 55\nsha256\nhalt').steps, 3 + (1 + 8 * 1) + 1);
  const r = run('loop: jmp loop', new Uint8Array(0), 1000);
  t.deepEqual([r.status, r.steps], ['out_of_fuel', 1000]);
  t.is(run('halt', new Uint8Array(0), 0).status, 'out_of_fuel');
  t.is(run('halt', new Uint8Array(0), 1).status, 'halted');
  t.is(
    run('.memory 200\npush 0\npush 100\noutcopy\nhalt', new Uint8Array(0), 4, 300).status,
    'out_of_fuel',
    'a bulk op needs its whole cost up front',
  );
});

test('BVM traps: every named trap is reachable, with the faulting pc and the output so far', (t) => {
  const cases: [(typeof BVM_STATUS)[number], string, Uint8Array?][] = [
    ['out_of_fuel', 'l: jmp l'],
    ['stack_overflow', 'l: push8 1\njmp l'],
    ['stack_underflow', 'add'],
    ['memory_out_of_bounds', '.memory 4\npush 1\nload32'],
    ['memory_out_of_bounds', '.memory 4\npush -1\npush 0\nstore8'],
    ['output_limit', 'l: push8 1\nout8\njmp l'],
    ['division_by_zero', 'push 1\npush 0\ndiv_u'],
    ['pc_out_of_bounds', 'nop'],
    ['pc_out_of_bounds', 'jmp 1000'],
    ['call_stack_overflow', 'l: call l'],
    ['call_stack_underflow', 'ret'],
    ['input_out_of_bounds', 'push 3\ninload8', utf8('abc')],
  ];
  for (const [want, src, input] of cases) t.is(run(src, input).status, want, src.replaceAll('\n', ' | '));
  // an invalid opcode byte, with output produced before it kept
  const img = buildImage(Uint8Array.of(0x03, 0x41, 0x4b, 0xff));
  const r = k.bvmRun(img, new Uint8Array(0), { fuel: 10, maxOutput: 10 });
  t.deepEqual([r.status, r.pc, r.steps, hex(r.output)], ['invalid_opcode', 3, 2, '41']);
  // truncated immediate
  const truncated = buildImage(Uint8Array.of(0x02, 1, 2));
  t.is(k.bvmRun(truncated, new Uint8Array(0), { fuel: 10, maxOutput: 0 }).status, 'pc_out_of_bounds');
});

test('BVM images: every malformed header is invalid_image, never a crash', (t) => {
  const good = assemble('.memory 8\n.data 2 1 2\nhalt').image;
  t.is(k.bvmRun(good, new Uint8Array(0), { fuel: 5, maxOutput: 0 }).status, 'halted');
  const mutate = (f: (dv: DataView, b: Uint8Array) => void) => {
    const b = good.slice();
    f(new DataView(b.buffer), b);
    return b;
  };
  const bad = [
    new Uint8Array(0), good.subarray(0, 23), good.subarray(0, good.length - 1), Uint8Array.from([...good, 0]),
    mutate((_, b) => { b[0] = 1; }), mutate((dv) => dv.setUint16(4, 2, true)), mutate((dv) => dv.setUint16(6, 1, true)),
    mutate((dv) => dv.setUint32(8, 65537, true)), mutate((dv) => dv.setUint32(8, 3, true)),
    mutate((dv) => dv.setUint32(12, 0, true)),
    mutate((dv) => dv.setUint32(16, 0xffffffff, true)), mutate((dv) => dv.setUint32(20, 0xfffffffe, true)),
  ];
  for (const img of bad) {
    t.is(k.bvmRun(img, new Uint8Array(0), { fuel: 5, maxOutput: 0 }).status, 'invalid_image');
    t.is(runReference(img, new Uint8Array(0), 5, 0).status, 'invalid_image');
  }
});

test('BVM examples in docs/examples assemble and produce their documented output', (t) => {
  const ex = (n: string) => readFileSync(new URL(`../../docs/examples/${n}`, import.meta.url), 'utf8');
  t.is(hex(run(ex('fib.bvm')).output), '000101020305080d15223759');
  const sum = run(ex('sum-input.bvm'), Uint8Array.of(200, 100, 50));
  t.is(Buffer.from(sum.output).readUInt32LE(0), 350);
  let h = createHash('sha256').update('seed').digest();
  for (let i = 0; i < 7; i++) h = createHash('sha256').update(h).digest();
  t.is(hex(run(ex('hash-chain.bvm'), utf8('seed')).output), h.toString('hex'));
});

test('BVM assembler: errors name the line; disassembler round-trips', (t) => {
  t.throws(() => assemble('nop\nfrob 1'), { message: /line 2: unknown instruction frob/ });
  t.throws(() => assemble('push8 300'), { message: /line 1: 300 out of range/ });
  t.throws(() => assemble('jmp nowhere'), { message: /line 1: undefined label nowhere/ });
  t.throws(() => assemble('.memory 2\n.data 1 1 2\nhalt'), { message: /\.data reaches byte 3/ });
  const { code } = assemble('a: push 5\npush8 -1\npick 3\njz a\nhalt');
  t.deepEqual(disassemble(code), ['0: push 5', '5: push8 -1', '7: pick 3', '9: jz 0', '14: halt']);
});

// ---- properties: the interpreter is total and bounded, and agrees with the reference ----

function checkBounded(image: Uint8Array, input: Uint8Array, fuel: number, maxOutput: number): boolean {
  const got = k.bvmRun(image, input, { fuel, maxOutput });
  const ref = runReference(image, input, fuel, maxOutput);
  return BVM_STATUS.includes(got.status) && got.steps <= fuel && got.output.length <= maxOutput
    && got.status === ref.status && got.steps === ref.steps && got.pc === ref.pc && hex(got.output) === hex(ref.output);
}

test('BVM property: random byte strings as images or as code always end halted or trapped, within bounds,'
  + ' as the reference does', (t) => {
  fc.assert(fc.property(
    fc.uint8Array({ maxLength: 200 }), fc.uint8Array({ maxLength: 64 }), fc.nat(5000), fc.nat(64), fc.nat(300),
    (bytes, input, fuel, maxOutput, memSize) =>
      checkBounded(bytes, input, fuel, maxOutput)
      && checkBounded(buildImage(bytes.length ? bytes : Uint8Array.of(0), { memSize }), input, fuel, maxOutput)),
  { numRuns: 2000 });
  t.pass();
});

/** Random well-formed programs: valid opcodes, immediates in range, jump targets on instruction boundaries. */
const instruction = fc.record({
  op: fc.constantFrom(...ISA),
  imm: fc.integer({ min: -0x8000_0000, max: 0x7fff_ffff }),
  target: fc.nat(),
});
const wellFormed = fc.array(instruction, { minLength: 1, maxLength: 60 })
  .map((instrs) => {
    const starts: number[] = [];
    let at = 0;
    for (const i of instrs) { starts.push(at); at += 1 + IMM_BYTES[i.op.imm]; }
    const code = new Uint8Array(at);
    const dv = new DataView(code.buffer);
    instrs.forEach((i, n) => {
      const p = starts[n]!;
      code[p] = i.op.code;
      // small values keep memory addresses and lengths in range often enough to exercise success paths
      const small = ((i.imm % 96) + 96) % 96;
      if (i.op.imm === 'i32') dv.setInt32(p + 1, i.imm % 7 === 0 ? i.imm : small, true);
      else if (i.op.imm === 'i8') dv.setInt8(p + 1, (i.imm % 128));
      else if (i.op.imm === 'u8') dv.setUint8(p + 1, small % 8);
      else if (i.op.imm === 'target') dv.setUint32(p + 1, starts[i.target % starts.length]!, true);
    });
    return code;
  });

test('BVM property: random well-formed programs end within fuel and bounds, identical to the reference', (t) => {
  fc.assert(fc.property(
    wellFormed, fc.uint8Array({ maxLength: 64 }), fc.integer({ min: 0, max: 20000 }), fc.nat(128), fc.nat(256),
    (code, input, fuel, maxOutput, memSize) => checkBounded(buildImage(code, { memSize }), input, fuel, maxOutput)),
  { numRuns: 3000 });
  t.pass();
});

test('BVM: a long tight loop is stopped exactly at its fuel (no host-side unbounded loop)', (t) => {
  const r = k.bvmRun(assemble('l: push8 1\npop\njmp l').image, new Uint8Array(0), { fuel: 30_000_000, maxOutput: 0 });
  t.deepEqual([r.status, r.steps], ['out_of_fuel', 30_000_000]);
});

test('BVM: random programs with many seeds (deterministic replay)', (t) => {
  const r = prng(2024);
  for (let i = 0; i < 500; i++) {
    const code = r.bytes(1 + r.int(100));
    const image = buildImage(code, { memSize: r.int(100) });
    t.true(checkBounded(image, r.bytes(r.int(20)), r.int(3000), r.int(40)), `seed case ${i}`);
  }
});
