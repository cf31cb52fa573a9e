// Reference BVM interpreter in plain TypeScript, written from docs/bvm.md independently of
// assembly/lib/bvm.ts. The property tests require both to agree on every program (status, steps,
// pc, output); the benchmark uses it as the JS anchor. Kept simple and obviously correct, but not
// slow on purpose: Int32Array stack, one switch, no allocation per step.
import { createHash } from 'node:crypto';

export const STATUS = [
  'halted', 'out_of_fuel', 'stack_overflow', 'stack_underflow', 'memory_out_of_bounds', 'output_limit',
  'invalid_opcode', 'invalid_image', 'division_by_zero', 'pc_out_of_bounds', 'call_stack_overflow',
  'call_stack_underflow', 'input_out_of_bounds',
] as const;

export interface RefResult { status: (typeof STATUS)[number]; steps: number; pc: number; output: Uint8Array }

const STACK_MAX = 1024, CALL_MAX = 256;

export function runReference(image: Uint8Array, input: Uint8Array, fuel: number, maxOut: number): RefResult {
  const out = new Uint8Array(maxOut);
  let outLen = 0, steps = 0, pc = 0;
  const done = (s: number): RefResult => ({ status: STATUS[s]!, steps, pc, output: out.slice(0, outLen) });
  if (image.length < 24) return done(7);
  const dv = new DataView(image.buffer, image.byteOffset, image.byteLength);
  if (image[0] !== 0 || image[1] !== 0x62 || image[2] !== 0x76 || image[3] !== 0x6d) return done(7);
  if (dv.getUint16(4, true) !== 1 || dv.getUint16(6, true) !== 0) return done(7);
  const memSize = dv.getUint32(8, true), codeLen = dv.getUint32(12, true);
  const dataLen = dv.getUint32(16, true), dataOff = dv.getUint32(20, true);
  if (memSize > 65536 || codeLen === 0 || codeLen > 65536) return done(7);
  if (dataOff + dataLen > memSize) return done(7);
  if (image.length !== 24 + codeLen + dataLen) return done(7);
  const code = image.subarray(24, 24 + codeLen);
  const cdv = new DataView(code.buffer, code.byteOffset, code.byteLength);
  const mem = new Uint8Array(memSize);
  const mdv = new DataView(mem.buffer);
  mem.set(image.subarray(24 + codeLen), dataOff);
  const st = new Int32Array(STACK_MAX);
  const calls = new Uint32Array(CALL_MAX);
  let sp = 0, csp = 0;
  for (;;) {
    if (pc >= codeLen) return done(9);
    if (steps >= fuel) return done(1);
    const op = code[pc]!;
    switch (op) {
      case 0x00: steps++; return done(0);
      case 0x01: pc++; break;
      case 0x02:
        if (pc + 5 > codeLen) return done(9);
        if (sp >= STACK_MAX) return done(2);
        st[sp++] = cdv.getInt32(pc + 1, true); pc += 5; break;
      case 0x03:
        if (pc + 2 > codeLen) return done(9);
        if (sp >= STACK_MAX) return done(2);
        st[sp++] = cdv.getInt8(pc + 1); pc += 2; break;
      case 0x04: if (sp < 1) return done(3); sp--; pc++; break;
      case 0x05:
        if (sp < 1) return done(3);
        if (sp >= STACK_MAX) return done(2);
        st[sp] = st[sp - 1]!; sp++; pc++; break;
      case 0x06: {
        if (sp < 2) return done(3);
        const t = st[sp - 1]!; st[sp - 1] = st[sp - 2]!; st[sp - 2] = t; pc++; break;
      }
      case 0x07:
        if (sp < 2) return done(3);
        if (sp >= STACK_MAX) return done(2);
        st[sp] = st[sp - 2]!; sp++; pc++; break;
      case 0x08: {
        if (pc + 2 > codeLen) return done(9);
        const n = code[pc + 1]!;
        if (sp < n + 1) return done(3);
        if (sp >= STACK_MAX) return done(2);
        st[sp] = st[sp - 1 - n]!; sp++; pc += 2; break;
      }
      case 0x10: case 0x11: case 0x12: case 0x13: case 0x14: case 0x15: case 0x16: case 0x17: case 0x18: case 0x19:
      case 0x1a: case 0x1b: case 0x1c: case 0x1d: case 0x1e: case 0x28: case 0x29: case 0x2a: case 0x2b: case 0x2c:
      case 0x2d: case 0x2e: case 0x2f: case 0x30: case 0x31: {
        if (sp < 2) return done(3);
        const a = st[sp - 2]!, b = st[sp - 1]!;
        let r: number;
        switch (op) {
          case 0x10: r = (a + b) | 0; break;
          case 0x11: r = (a - b) | 0; break;
          case 0x12: r = Math.imul(a, b); break;
          case 0x13: if (b === 0) return done(8); r = (a / b) | 0; break; // INT_MIN / -1 wraps to INT_MIN
          case 0x14: if (b === 0) return done(8); r = Math.floor((a >>> 0) / (b >>> 0)) | 0; break;
          case 0x15: if (b === 0) return done(8); r = (a % b) | 0; break;
          case 0x16: if (b === 0) return done(8); r = ((a >>> 0) % (b >>> 0)) | 0; break;
          case 0x17: r = a & b; break;
          case 0x18: r = a | b; break;
          case 0x19: r = a ^ b; break;
          case 0x1a: r = a << (b & 31); break;
          case 0x1b: r = a >> (b & 31); break;
          case 0x1c: r = (a >>> (b & 31)) | 0; break;
          case 0x1d: { const s = b & 31; r = s ? (a << s) | (a >>> (32 - s)) : a; break; }
          case 0x1e: { const s = b & 31; r = s ? (a >>> s) | (a << (32 - s)) : a; break; }
          case 0x28: r = +(a === b); break;
          case 0x29: r = +(a !== b); break;
          case 0x2a: r = +(a < b); break;
          case 0x2b: r = +((a >>> 0) < (b >>> 0)); break;
          case 0x2c: r = +(a > b); break;
          case 0x2d: r = +((a >>> 0) > (b >>> 0)); break;
          case 0x2e: r = +(a <= b); break;
          case 0x2f: r = +((a >>> 0) <= (b >>> 0)); break;
          case 0x30: r = +(a >= b); break;
          default: r = +((a >>> 0) >= (b >>> 0)); break;
        }
        st[sp - 2] = r; sp--; pc++; break;
      }
      case 0x1f: if (sp < 1) return done(3); st[sp - 1] = ~st[sp - 1]!; pc++; break;
      case 0x20: if (sp < 1) return done(3); st[sp - 1] = -st[sp - 1]! | 0; pc++; break;
      case 0x32: if (sp < 1) return done(3); st[sp - 1] = +(st[sp - 1] === 0); pc++; break;
      case 0x38: case 0x39: case 0x3a: case 0x3b: {
        if (pc + 5 > codeLen) return done(9);
        const target = cdv.getUint32(pc + 1, true);
        let take = true;
        if (op === 0x39 || op === 0x3a) {
          if (sp < 1) return done(3);
          const v = st[sp - 1]!;
          take = op === 0x39 ? v === 0 : v !== 0;
          if (take && target >= codeLen) return done(9);
          sp--;
        } else if (op === 0x3b && csp >= CALL_MAX) return done(10);
        if (take) {
          if (target >= codeLen) return done(9);
          if (op === 0x3b) calls[csp++] = pc + 5;
          pc = target;
        } else pc += 5;
        break;
      }
      case 0x3c: if (csp < 1) return done(11); pc = calls[--csp]!; break;
      case 0x40: case 0x41: {
        if (sp < 1) return done(3);
        const addr = st[sp - 1]! >>> 0, w = op === 0x40 ? 1 : 4;
        if (addr + w > memSize) return done(4);
        st[sp - 1] = op === 0x40 ? mem[addr]! : mdv.getInt32(addr, true); pc++; break;
      }
      case 0x42: case 0x43: {
        if (sp < 2) return done(3);
        const addr = st[sp - 2]! >>> 0, v = st[sp - 1]!, w = op === 0x42 ? 1 : 4;
        if (addr + w > memSize) return done(4);
        if (op === 0x42) mem[addr] = v & 0xff; else mdv.setInt32(addr, v, true);
        sp -= 2; pc++; break;
      }
      case 0x48: if (sp >= STACK_MAX) return done(2); st[sp++] = input.length | 0; pc++; break;
      case 0x49: {
        if (sp < 1) return done(3);
        const i = st[sp - 1]! >>> 0;
        if (i >= input.length) return done(12);
        st[sp - 1] = input[i]!; pc++; break;
      }
      case 0x4a: {
        if (sp < 3) return done(3);
        const dst = st[sp - 3]! >>> 0, src = st[sp - 2]! >>> 0, len = st[sp - 1]! >>> 0;
        const cost = 1 + Math.ceil(len / 64);
        if (steps + cost > fuel) return done(1);
        if (dst + len > memSize) return done(4);
        if (src + len > input.length) return done(12);
        mem.set(input.subarray(src, src + len), dst);
        steps += cost - 1; sp -= 3; pc++; break;
      }
      case 0x4b: {
        if (sp < 1) return done(3);
        if (outLen >= maxOut) return done(5);
        out[outLen++] = st[--sp]! & 0xff; pc++; break;
      }
      case 0x4c: {
        if (sp < 2) return done(3);
        const addr = st[sp - 2]! >>> 0, len = st[sp - 1]! >>> 0;
        const cost = 1 + Math.ceil(len / 64);
        if (steps + cost > fuel) return done(1);
        if (addr + len > memSize) return done(4);
        if (outLen + len > maxOut) return done(5);
        out.set(mem.subarray(addr, addr + len), outLen); outLen += len;
        steps += cost - 1; sp -= 2; pc++; break;
      }
      case 0x50: {
        if (sp < 3) return done(3);
        const dst = st[sp - 3]! >>> 0, src = st[sp - 2]! >>> 0, len = st[sp - 1]! >>> 0;
        const cost = 1 + 8 * Math.floor((len + 9 + 63) / 64);
        if (steps + cost > fuel) return done(1);
        if (dst + 32 > memSize || src + len > memSize) return done(4);
        mem.set(createHash('sha256').update(mem.subarray(src, src + len)).digest(), dst);
        steps += cost - 1; sp -= 3; pc++; break;
      }
      default: return done(6);
    }
    steps++;
  }
}
