// The BVM instruction set as data: mnemonic, opcode byte, immediate, stack effect. docs/bvm.md is
// the specification; the assembler, the disassembler and the test reference interpreter read this
// table, and test/kernels/bvm.test.ts checks the WASM interpreter against all of it.

export type Immediate = 'none' | 'i32' | 'i8' | 'u8' | 'target';

export interface OpInfo {
  readonly name: string;
  readonly code: number;
  readonly imm: Immediate;
  /** values popped (PICK pops nothing but needs n+1; see docs) */
  readonly pops: number;
  readonly pushes: number;
  /** fuel rule: 1 for all but the bulk ops, whose extra cost depends on a length */
  readonly cost: 'one' | 'bulk' | 'sha256';
}

const op = (
  name: string, code: number, imm: Immediate, pops: number, pushes: number, cost: OpInfo['cost'] = 'one',
): OpInfo => ({ name, code, imm, pops, pushes, cost });

export const ISA: readonly OpInfo[] = [
  op('halt', 0x00, 'none', 0, 0),
  op('nop', 0x01, 'none', 0, 0),
  op('push', 0x02, 'i32', 0, 1),
  op('push8', 0x03, 'i8', 0, 1),
  op('pop', 0x04, 'none', 1, 0),
  op('dup', 0x05, 'none', 1, 2),
  op('swap', 0x06, 'none', 2, 2),
  op('over', 0x07, 'none', 2, 3),
  op('pick', 0x08, 'u8', 0, 1),
  op('add', 0x10, 'none', 2, 1),
  op('sub', 0x11, 'none', 2, 1),
  op('mul', 0x12, 'none', 2, 1),
  op('div_s', 0x13, 'none', 2, 1),
  op('div_u', 0x14, 'none', 2, 1),
  op('rem_s', 0x15, 'none', 2, 1),
  op('rem_u', 0x16, 'none', 2, 1),
  op('and', 0x17, 'none', 2, 1),
  op('or', 0x18, 'none', 2, 1),
  op('xor', 0x19, 'none', 2, 1),
  op('shl', 0x1a, 'none', 2, 1),
  op('shr_s', 0x1b, 'none', 2, 1),
  op('shr_u', 0x1c, 'none', 2, 1),
  op('rotl', 0x1d, 'none', 2, 1),
  op('rotr', 0x1e, 'none', 2, 1),
  op('not', 0x1f, 'none', 1, 1),
  op('neg', 0x20, 'none', 1, 1),
  op('eq', 0x28, 'none', 2, 1),
  op('ne', 0x29, 'none', 2, 1),
  op('lt_s', 0x2a, 'none', 2, 1),
  op('lt_u', 0x2b, 'none', 2, 1),
  op('gt_s', 0x2c, 'none', 2, 1),
  op('gt_u', 0x2d, 'none', 2, 1),
  op('le_s', 0x2e, 'none', 2, 1),
  op('le_u', 0x2f, 'none', 2, 1),
  op('ge_s', 0x30, 'none', 2, 1),
  op('ge_u', 0x31, 'none', 2, 1),
  op('eqz', 0x32, 'none', 1, 1),
  op('jmp', 0x38, 'target', 0, 0),
  op('jz', 0x39, 'target', 1, 0),
  op('jnz', 0x3a, 'target', 1, 0),
  op('call', 0x3b, 'target', 0, 0),
  op('ret', 0x3c, 'none', 0, 0),
  op('load8', 0x40, 'none', 1, 1),
  op('load32', 0x41, 'none', 1, 1),
  op('store8', 0x42, 'none', 2, 0),
  op('store32', 0x43, 'none', 2, 0),
  op('inlen', 0x48, 'none', 0, 1),
  op('inload8', 0x49, 'none', 1, 1),
  op('incopy', 0x4a, 'none', 3, 0, 'bulk'),
  op('out8', 0x4b, 'none', 1, 0),
  op('outcopy', 0x4c, 'none', 2, 0, 'bulk'),
  op('sha256', 0x50, 'none', 3, 0, 'sha256'),
];

export const OP_BY_NAME: ReadonlyMap<string, OpInfo> = new Map(ISA.map((o) => [o.name, o]));
export const OP_BY_CODE: ReadonlyMap<number, OpInfo> = new Map(ISA.map((o) => [o.code, o]));

export const IMM_BYTES: Record<Immediate, number> = { none: 0, i32: 4, i8: 1, u8: 1, target: 4 };

/** BVM image magic "\0bvm" and version (docs/bvm.md §Image). */
export const BVM_MAGIC = Uint8Array.of(0x00, 0x62, 0x76, 0x6d);
export const BVM_VERSION = 1;

/** Extra fuel of the bulk byte ops beyond their base 1 (docs/bvm.md §Fuel). */
export function bulkExtra(len: number): number { return Math.ceil(len / 64); }
export function sha256Extra(len: number): number { return 8 * Math.floor((len + 9 + 63) / 64); }
