// The BVM: a bounded, deterministic stack-machine interpreter (specification: docs/bvm.md, which
// this file implements line by line; the TypeScript reference in test/reference/bvm-ref.ts must
// agree with it on every program). Every run ends in HALTED or a named trap, with the exact fuel
// used; no input can make it loop past its fuel, touch memory outside its own regions, or grow.
//
// Values are i32 (arithmetic wraps mod 2^32). VM memory, the value stack and the call stack are
// static regions of this module, so a run allocates nothing.
import { sha256 } from './sha256';

// ---- limits (docs/bvm.md §Limits) ----
export const BVM_MAX_MEMORY: u32 = 65536;
export const BVM_MAX_CODE: u32 = 65536;
export const BVM_STACK_MAX: i32 = 1024;
export const BVM_CALL_MAX: i32 = 256;
export const BVM_HEADER: u32 = 24;

// ---- status codes ----
export const HALTED: i32 = 0;
export const OUT_OF_FUEL: i32 = 1;
export const STACK_OVERFLOW: i32 = 2;
export const STACK_UNDERFLOW: i32 = 3;
export const MEMORY_OUT_OF_BOUNDS: i32 = 4;
export const OUTPUT_LIMIT: i32 = 5;
export const INVALID_OPCODE: i32 = 6;
export const INVALID_IMAGE: i32 = 7;
export const DIVISION_BY_ZERO: i32 = 8;
export const PC_OUT_OF_BOUNDS: i32 = 9;
export const CALL_STACK_OVERFLOW: i32 = 10;
export const CALL_STACK_UNDERFLOW: i32 = 11;
export const INPUT_OUT_OF_BOUNDS: i32 = 12;

const vmMem = memory.data(65536 + 64, 16);
const vmStack = memory.data(1024 * 4 + 64, 16);
const vmCalls = memory.data(256 * 4, 16);
const hashTmp = memory.data(32, 16);

/** Extra fuel for a bulk byte operation over `len` bytes: one unit per started 64-byte chunk. */
@inline function bulkCost(len: u32): u64 { return (<u64>len + 63) >> 6; }

/** Writes the result record (status, steps, out_len, pc: four u32 LE) and returns status. */
function finish(res: usize, status: i32, steps: u64, outLen: u32, pc: u32): i32 {
  store<u32>(res, <u32>status, 0);
  store<u32>(res, <u32>steps, 4);
  store<u32>(res, outLen, 8);
  store<u32>(res, pc, 12);
  return status;
}

/**
 * Runs a program image with `input`, at most `fuel` steps, writing at most `maxOut` output bytes
 * to `out`. Returns the status (0 halted, else a trap code) and writes the 16-byte result record.
 */
export function bvmRun(
  img: usize, imgLen: u32, input: usize, inLen: u32, fuel: u32, maxOut: u32, out: usize, res: usize
): i32 {
  // ---- image validation (docs/bvm.md §Image) ----
  if (imgLen < BVM_HEADER) return finish(res, INVALID_IMAGE, 0, 0, 0);
  if (load<u32>(img) != 0x6d766200) return finish(res, INVALID_IMAGE, 0, 0, 0); // "\0bvm"
  if (load<u16>(img, 4) != 1 || load<u16>(img, 6) != 0) return finish(res, INVALID_IMAGE, 0, 0, 0);
  const memSize = load<u32>(img, 8);
  const codeLen = load<u32>(img, 12);
  const dataLen = load<u32>(img, 16);
  const dataOff = load<u32>(img, 20);
  if (memSize > BVM_MAX_MEMORY || codeLen == 0 || codeLen > BVM_MAX_CODE) return finish(res, INVALID_IMAGE, 0, 0, 0);
  if (<u64>dataOff + <u64>dataLen > <u64>memSize) return finish(res, INVALID_IMAGE, 0, 0, 0);
  if (<u64>imgLen != <u64>BVM_HEADER + <u64>codeLen + <u64>dataLen) return finish(res, INVALID_IMAGE, 0, 0, 0);

  const code = img + BVM_HEADER;
  memory.fill(vmMem, 0, memSize);
  memory.copy(vmMem + dataOff, code + codeLen, dataLen);

  const F = <u64>fuel;
  let steps: u64 = 0;
  let pc: u32 = 0;
  let sp: i32 = 0; // number of values on the stack
  let csp: i32 = 0;
  let outLen: u32 = 0;
  const S = vmStack;

  while (true) {
    if (pc >= codeLen) return finish(res, PC_OUT_OF_BOUNDS, steps, outLen, pc);
    if (steps >= F) return finish(res, OUT_OF_FUEL, steps, outLen, pc);
    const op = load<u8>(code + pc);
    switch (op) {
      case 0x00: { // HALT
        return finish(res, HALTED, steps + 1, outLen, pc);
      }
      case 0x01: { pc += 1; break; } // NOP
      case 0x02: { // PUSH imm32
        if (pc + 5 > codeLen) return finish(res, PC_OUT_OF_BOUNDS, steps, outLen, pc);
        if (sp >= BVM_STACK_MAX) return finish(res, STACK_OVERFLOW, steps, outLen, pc);
        store<i32>(S + (<usize>sp << 2), load<i32>(code + pc, 1)); sp++; pc += 5; break;
      }
      case 0x03: { // PUSH8 imm8 (sign-extended)
        if (pc + 2 > codeLen) return finish(res, PC_OUT_OF_BOUNDS, steps, outLen, pc);
        if (sp >= BVM_STACK_MAX) return finish(res, STACK_OVERFLOW, steps, outLen, pc);
        store<i32>(S + (<usize>sp << 2), <i32>load<i8>(code + pc, 1)); sp++; pc += 2; break;
      }
      case 0x04: { // POP
        if (sp < 1) return finish(res, STACK_UNDERFLOW, steps, outLen, pc);
        sp--; pc += 1; break;
      }
      case 0x05: { // DUP
        if (sp < 1) return finish(res, STACK_UNDERFLOW, steps, outLen, pc);
        if (sp >= BVM_STACK_MAX) return finish(res, STACK_OVERFLOW, steps, outLen, pc);
        store<i32>(S + (<usize>sp << 2), load<i32>(S + (<usize>(sp - 1) << 2))); sp++; pc += 1; break;
      }
      case 0x06: { // SWAP
        if (sp < 2) return finish(res, STACK_UNDERFLOW, steps, outLen, pc);
        const p = S + (<usize>(sp - 2) << 2);
        const a = load<i32>(p), b = load<i32>(p, 4);
        store<i32>(p, b); store<i32>(p, a, 4); pc += 1; break;
      }
      case 0x07: { // OVER
        if (sp < 2) return finish(res, STACK_UNDERFLOW, steps, outLen, pc);
        if (sp >= BVM_STACK_MAX) return finish(res, STACK_OVERFLOW, steps, outLen, pc);
        store<i32>(S + (<usize>sp << 2), load<i32>(S + (<usize>(sp - 2) << 2))); sp++; pc += 1; break;
      }
      case 0x08: { // PICK imm8
        if (pc + 2 > codeLen) return finish(res, PC_OUT_OF_BOUNDS, steps, outLen, pc);
        const n = <i32>load<u8>(code + pc, 1);
        if (sp < n + 1) return finish(res, STACK_UNDERFLOW, steps, outLen, pc);
        if (sp >= BVM_STACK_MAX) return finish(res, STACK_OVERFLOW, steps, outLen, pc);
        store<i32>(S + (<usize>sp << 2), load<i32>(S + (<usize>(sp - 1 - n) << 2))); sp++; pc += 2; break;
      }
      case 0x10: case 0x11: case 0x12: case 0x13: case 0x14: case 0x15: case 0x16: case 0x17:
      case 0x18: case 0x19: case 0x1a: case 0x1b: case 0x1c: case 0x1d: case 0x1e:
      case 0x28: case 0x29: case 0x2a: case 0x2b: case 0x2c: case 0x2d: case 0x2e: case 0x2f:
      case 0x30: case 0x31: {
        if (sp < 2) return finish(res, STACK_UNDERFLOW, steps, outLen, pc);
        const p = S + (<usize>(sp - 2) << 2);
        const a = load<i32>(p), b = load<i32>(p, 4);
        let r: i32 = 0;
        switch (op) {
          case 0x10: { r = a + b; break; }
          case 0x11: { r = a - b; break; }
          case 0x12: { r = a * b; break; }
          case 0x13: {
            if (b == 0) return finish(res, DIVISION_BY_ZERO, steps, outLen, pc);
            r = (a == i32.MIN_VALUE && b == -1) ? a : a / b; break;
          }
          case 0x14: {
            if (b == 0) return finish(res, DIVISION_BY_ZERO, steps, outLen, pc);
            r = <i32>(<u32>a / <u32>b); break;
          }
          case 0x15: {
            if (b == 0) return finish(res, DIVISION_BY_ZERO, steps, outLen, pc);
            r = b == -1 ? 0 : a % b; break;
          }
          case 0x16: {
            if (b == 0) return finish(res, DIVISION_BY_ZERO, steps, outLen, pc);
            r = <i32>(<u32>a % <u32>b); break;
          }
          case 0x17: { r = a & b; break; }
          case 0x18: { r = a | b; break; }
          case 0x19: { r = a ^ b; break; }
          case 0x1a: { r = a << (b & 31); break; }
          case 0x1b: { r = a >> (b & 31); break; }
          case 0x1c: { r = <i32>(<u32>a >>> (b & 31)); break; }
          case 0x1d: { r = rotl<i32>(a, b & 31); break; }
          case 0x1e: { r = rotr<i32>(a, b & 31); break; }
          case 0x28: { r = <i32>(a == b); break; }
          case 0x29: { r = <i32>(a != b); break; }
          case 0x2a: { r = <i32>(a < b); break; }
          case 0x2b: { r = <i32>(<u32>a < <u32>b); break; }
          case 0x2c: { r = <i32>(a > b); break; }
          case 0x2d: { r = <i32>(<u32>a > <u32>b); break; }
          case 0x2e: { r = <i32>(a <= b); break; }
          case 0x2f: { r = <i32>(<u32>a <= <u32>b); break; }
          case 0x30: { r = <i32>(a >= b); break; }
          default: { r = <i32>(<u32>a >= <u32>b); break; } // 0x31
        }
        store<i32>(p, r); sp--; pc += 1; break;
      }
      case 0x1f: case 0x20: case 0x32: { // NOT, NEG, EQZ
        if (sp < 1) return finish(res, STACK_UNDERFLOW, steps, outLen, pc);
        const p = S + (<usize>(sp - 1) << 2);
        const a = load<i32>(p);
        store<i32>(p, op == 0x1f ? ~a : op == 0x20 ? -a : <i32>(a == 0));
        pc += 1; break;
      }
      case 0x38: case 0x39: case 0x3a: case 0x3b: { // JMP, JZ, JNZ, CALL imm32
        if (pc + 5 > codeLen) return finish(res, PC_OUT_OF_BOUNDS, steps, outLen, pc);
        const target = load<u32>(code + pc, 1);
        let take = true;
        if (op == 0x39 || op == 0x3a) {
          if (sp < 1) return finish(res, STACK_UNDERFLOW, steps, outLen, pc);
          sp--;
          const v = load<i32>(S + (<usize>sp << 2));
          take = op == 0x39 ? v == 0 : v != 0;
        } else if (op == 0x3b) {
          if (csp >= BVM_CALL_MAX) return finish(res, CALL_STACK_OVERFLOW, steps, outLen, pc);
        }
        if (take) {
          if (target >= codeLen) {
            if (op == 0x39 || op == 0x3a) sp++; // a trapping instruction leaves the stack as it was
            return finish(res, PC_OUT_OF_BOUNDS, steps, outLen, pc);
          }
          if (op == 0x3b) { store<u32>(vmCalls + (<usize>csp << 2), pc + 5); csp++; }
          pc = target;
        } else {
          pc += 5;
        }
        break;
      }
      case 0x3c: { // RET
        if (csp < 1) return finish(res, CALL_STACK_UNDERFLOW, steps, outLen, pc);
        csp--;
        pc = load<u32>(vmCalls + (<usize>csp << 2));
        break;
      }
      case 0x40: case 0x41: { // LOAD8, LOAD32
        if (sp < 1) return finish(res, STACK_UNDERFLOW, steps, outLen, pc);
        const p = S + (<usize>(sp - 1) << 2);
        const addr = load<u32>(p);
        const width: u64 = op == 0x40 ? 1 : 4;
        if (<u64>addr + width > <u64>memSize) return finish(res, MEMORY_OUT_OF_BOUNDS, steps, outLen, pc);
        store<i32>(p, op == 0x40 ? <i32>load<u8>(vmMem + addr) : load<i32>(vmMem + addr));
        pc += 1; break;
      }
      case 0x42: case 0x43: { // STORE8, STORE32: [addr value] →
        if (sp < 2) return finish(res, STACK_UNDERFLOW, steps, outLen, pc);
        const p = S + (<usize>(sp - 2) << 2);
        const addr = load<u32>(p), v = load<i32>(p, 4);
        const width: u64 = op == 0x42 ? 1 : 4;
        if (<u64>addr + width > <u64>memSize) return finish(res, MEMORY_OUT_OF_BOUNDS, steps, outLen, pc);
        if (op == 0x42) store<u8>(vmMem + addr, <u8>v); else store<i32>(vmMem + addr, v);
        sp -= 2; pc += 1; break;
      }
      case 0x48: { // INLEN
        if (sp >= BVM_STACK_MAX) return finish(res, STACK_OVERFLOW, steps, outLen, pc);
        store<u32>(S + (<usize>sp << 2), inLen); sp++; pc += 1; break;
      }
      case 0x49: { // INLOAD8: [i] → [input[i]]
        if (sp < 1) return finish(res, STACK_UNDERFLOW, steps, outLen, pc);
        const p = S + (<usize>(sp - 1) << 2);
        const i = load<u32>(p);
        if (i >= inLen) return finish(res, INPUT_OUT_OF_BOUNDS, steps, outLen, pc);
        store<i32>(p, <i32>load<u8>(input + i)); pc += 1; break;
      }
      case 0x4a: { // INCOPY: [dst src len] →
        if (sp < 3) return finish(res, STACK_UNDERFLOW, steps, outLen, pc);
        const p = S + (<usize>(sp - 3) << 2);
        const dst = load<u32>(p), src = load<u32>(p, 4), len = load<u32>(p, 8);
        const cost = 1 + bulkCost(len);
        if (steps + cost > F) return finish(res, OUT_OF_FUEL, steps, outLen, pc);
        if (<u64>dst + <u64>len > <u64>memSize) return finish(res, MEMORY_OUT_OF_BOUNDS, steps, outLen, pc);
        if (<u64>src + <u64>len > <u64>inLen) return finish(res, INPUT_OUT_OF_BOUNDS, steps, outLen, pc);
        memory.copy(vmMem + dst, input + src, len);
        steps += cost - 1; sp -= 3; pc += 1; break;
      }
      case 0x4b: { // OUT8: [v] →
        if (sp < 1) return finish(res, STACK_UNDERFLOW, steps, outLen, pc);
        if (outLen >= maxOut) return finish(res, OUTPUT_LIMIT, steps, outLen, pc);
        sp--;
        store<u8>(out + outLen, <u8>load<i32>(S + (<usize>sp << 2))); outLen++; pc += 1; break;
      }
      case 0x4c: { // OUTCOPY: [addr len] →
        if (sp < 2) return finish(res, STACK_UNDERFLOW, steps, outLen, pc);
        const p = S + (<usize>(sp - 2) << 2);
        const addr = load<u32>(p), len = load<u32>(p, 4);
        const cost = 1 + bulkCost(len);
        if (steps + cost > F) return finish(res, OUT_OF_FUEL, steps, outLen, pc);
        if (<u64>addr + <u64>len > <u64>memSize) return finish(res, MEMORY_OUT_OF_BOUNDS, steps, outLen, pc);
        if (<u64>outLen + <u64>len > <u64>maxOut) return finish(res, OUTPUT_LIMIT, steps, outLen, pc);
        memory.copy(out + outLen, vmMem + addr, len);
        outLen += len; steps += cost - 1; sp -= 2; pc += 1; break;
      }
      case 0x50: { // SHA256: [dst src len] →
        if (sp < 3) return finish(res, STACK_UNDERFLOW, steps, outLen, pc);
        const p = S + (<usize>(sp - 3) << 2);
        const dst = load<u32>(p), src = load<u32>(p, 4), len = load<u32>(p, 8);
        const cost = 1 + 8 * ((<u64>len + 9 + 63) >> 6);
        if (steps + cost > F) return finish(res, OUT_OF_FUEL, steps, outLen, pc);
        if (<u64>dst + 32 > <u64>memSize || <u64>src + <u64>len > <u64>memSize) {
          return finish(res, MEMORY_OUT_OF_BOUNDS, steps, outLen, pc);
        }
        sha256(vmMem + src, len, hashTmp);
        memory.copy(vmMem + dst, hashTmp, 32);
        steps += cost - 1; sp -= 3; pc += 1; break;
      }
      default:
        return finish(res, INVALID_OPCODE, steps, outLen, pc);
    }
    steps++;
  }
  return finish(res, INVALID_OPCODE, steps, outLen, pc); // unreachable
}
