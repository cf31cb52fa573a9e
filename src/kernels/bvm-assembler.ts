// BVM assembler and disassembler: text ⇄ program image (docs/bvm.md §Assembly language). Pure and
// deterministic: the same text always gives the same bytes. Errors name the line.
import { ServiceError } from '../errors.ts';
import { BVM_MAGIC, BVM_VERSION, IMM_BYTES, ISA, OP_BY_CODE, OP_BY_NAME } from './bvm-isa.ts';
import { BVM_LIMITS } from './abi.ts';

export interface AssembleResult {
  image: Uint8Array;
  code: Uint8Array;
  labels: Record<string, number>;
}

function fail(line: number, msg: string): never {
  throw new ServiceError('invalid_request', `bvm asm line ${line}: ${msg}`);
}

function parseInt32(tok: string, line: number, min: number, max: number): number {
  if (!/^[-+]?(0x[0-9a-f]+|0b[01]+|\d+)$/i.test(tok)) fail(line, `not a number: ${tok}`);
  const neg = tok.startsWith('-');
  const body = tok.replace(/^[-+]/, '');
  const v = (neg ? -1 : 1) * Number(body);
  if (!Number.isSafeInteger(v) || v < min || v > max) fail(line, `${tok} out of range ${min}..${max}`);
  return v;
}

/** Splits a line into tokens, keeping "quoted strings" (with \n \t \" \\ \xNN escapes) whole. */
function tokenize(text: string, line: number): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === ';' || c === '#') break;
    if (/\s|,/.test(c)) { i++; continue; }
    if (c === '"') {
      let j = i + 1, s = '"';
      while (j < text.length && text[j] !== '"') {
        if (text[j] === '\\') { s += text[j]; j++; }
        s += text[j] ?? '';
        j++;
      }
      if (j >= text.length) fail(line, 'unterminated string');
      out.push(s + '"'); i = j + 1; continue;
    }
    let j = i;
    while (j < text.length && !/[\s,;#]/.test(text[j]!)) j++;
    out.push(text.slice(i, j)); i = j;
  }
  return out;
}

function unquote(tok: string, line: number): Uint8Array {
  // characters are UTF-8; \xNN is one raw byte
  const body = tok.slice(1, -1);
  const bytes: number[] = [];
  const enc = new TextEncoder();
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      const cp = body.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      bytes.push(...enc.encode(ch));
      i += ch.length - 1;
      continue;
    }
    const n = body[++i];
    if (n === 'n') bytes.push(10); else if (n === 't') bytes.push(9); else if (n === '0') bytes.push(0);
    else if (n === '"' || n === '\\') bytes.push(n.charCodeAt(0));
    else if (n === 'x') {
      const h = body.slice(i + 1, i + 3);
      if (!/^[0-9a-f]{2}$/i.test(h)) fail(line, 'bad \\x escape');
      bytes.push(parseInt(h, 16));
      i += 2;
    } else {
      fail(line, `bad escape \\${n ?? ''}`);
    }
  }
  return Uint8Array.from(bytes);
}

/** A hex:… data operand as bytes. */
function hexOperand(tok: string, line: number): Uint8Array {
  if (!/^hex:([0-9a-f]{2})*$/i.test(tok)) fail(line, `bad hex ${tok}`);
  return Uint8Array.from(tok.slice(4).match(/../g) ?? [], (h) => parseInt(h, 16));
}

/** Assembles BVM text into a program image. */
export function assemble(source: string): AssembleResult {
  let memSize = 0;
  const data = new Map<number, number>();
  const labels: Record<string, number> = {};
  const fixups: { at: number; label: string; line: number }[] = [];
  const code: number[] = [];
  const lines = source.split(/\r?\n/);
  lines.forEach((raw, idx) => {
    const line = idx + 1;
    let toks = tokenize(raw, line);
    while (toks.length && toks[0]!.endsWith(':')) {
      const name = toks[0]!.slice(0, -1);
      if (!/^[A-Za-z_.$][\w.$]*$/.test(name)) fail(line, `bad label ${name}`);
      if (name in labels) fail(line, `duplicate label ${name}`);
      labels[name] = code.length;
      toks = toks.slice(1);
    }
    if (!toks.length) return;
    const [head, ...rest] = toks as [string, ...string[]];
    const mnem = head.toLowerCase();
    if (mnem === '.memory') {
      if (rest.length !== 1) fail(line, '.memory takes one size');
      memSize = parseInt32(rest[0]!, line, 0, BVM_LIMITS.maxMemory);
      return;
    }
    if (mnem === '.data') {
      if (!rest.length) fail(line, '.data needs an offset');
      let at = parseInt32(rest[0]!, line, 0, BVM_LIMITS.maxMemory - 1);
      for (const t of rest.slice(1)) {
        const bytes = t.startsWith('"') ? unquote(t, line)
          : /^hex:/i.test(t) ? hexOperand(t, line)
          : Uint8Array.of(parseInt32(t, line, -128, 255) & 0xff);
        for (const b of bytes) { if (data.has(at)) fail(line, `data byte ${at} set twice`); data.set(at++, b); }
      }
      return;
    }
    const info = OP_BY_NAME.get(mnem);
    if (!info) fail(line, `unknown instruction ${head}`);
    const want = info.imm === 'none' ? 0 : 1;
    if (rest.length !== want) fail(line, `${info.name} takes ${want} operand${want === 1 ? '' : 's'}`);
    code.push(info.code);
    const arg = rest[0];
    switch (info.imm) {
      case 'none': break;
      case 'i8': code.push(parseInt32(arg!, line, -128, 127) & 0xff); break;
      case 'u8': code.push(parseInt32(arg!, line, 0, 255)); break;
      case 'i32':
      case 'target': {
        let v = 0;
        if (/^[A-Za-z_.$]/.test(arg!)) { fixups.push({ at: code.length, label: arg!, line }); }
        else v = parseInt32(arg!, line, -0x8000_0000, 0xffff_ffff);
        code.push(v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff);
        break;
      }
    }
  });
  for (const f of fixups) {
    const v = labels[f.label];
    if (v === undefined) fail(f.line, `undefined label ${f.label}`);
    code[f.at] = v & 0xff;
    code[f.at + 1] = (v >>> 8) & 0xff;
    code[f.at + 2] = (v >>> 16) & 0xff;
    code[f.at + 3] = (v >>> 24) & 0xff;
  }
  if (code.length === 0) fail(lines.length, 'program has no instructions');
  if (code.length > BVM_LIMITS.maxCode) fail(lines.length, `code is ${code.length} bytes, limit ${BVM_LIMITS.maxCode}`);
  let dataOff = 0, dataBytes = new Uint8Array(0);
  if (data.size) {
    const keys = [...data.keys()];
    dataOff = Math.min(...keys);
    const end = Math.max(...keys) + 1;
    if (end > memSize) fail(lines.length, `.data reaches byte ${end} but .memory is ${memSize}`);
    dataBytes = new Uint8Array(end - dataOff);
    for (const [k, v] of data) dataBytes[k - dataOff] = v;
  }
  const codeBytes = Uint8Array.from(code);
  return { image: buildImage(codeBytes, { memSize, dataOffset: dataOff, data: dataBytes }), code: codeBytes, labels };
}

/** Builds an image from raw code bytes (docs/bvm.md §Image). */
export function buildImage(
  code: Uint8Array,
  opts: { memSize?: number; dataOffset?: number; data?: Uint8Array } = {},
): Uint8Array {
  const data = opts.data ?? new Uint8Array(0);
  const img = new Uint8Array(24 + code.length + data.length);
  const dv = new DataView(img.buffer);
  img.set(BVM_MAGIC, 0);
  dv.setUint16(4, BVM_VERSION, true);
  dv.setUint16(6, 0, true);
  dv.setUint32(8, opts.memSize ?? 0, true);
  dv.setUint32(12, code.length, true);
  dv.setUint32(16, data.length, true);
  dv.setUint32(20, opts.dataOffset ?? 0, true);
  img.set(code, 24);
  img.set(data, 24 + code.length);
  return img;
}

/** Disassembles code bytes to one line per instruction ("offset: mnemonic operand"). */
export function disassemble(code: Uint8Array): string[] {
  const out: string[] = [];
  const dv = new DataView(code.buffer, code.byteOffset, code.byteLength);
  for (let pc = 0; pc < code.length;) {
    const info = OP_BY_CODE.get(code[pc]!);
    if (!info) { out.push(`${pc}: .byte 0x${code[pc]!.toString(16).padStart(2, '0')}`); pc++; continue; }
    const n = IMM_BYTES[info.imm];
    if (pc + 1 + n > code.length) { out.push(`${pc}: ${info.name} <truncated>`); break; }
    const arg = info.imm === 'i32' ? ` ${dv.getInt32(pc + 1, true)}`
      : info.imm === 'target' ? ` ${dv.getUint32(pc + 1, true)}`
      : info.imm === 'i8' ? ` ${dv.getInt8(pc + 1)}`
      : info.imm === 'u8' ? ` ${dv.getUint8(pc + 1)}`
      : '';
    out.push(`${pc}: ${info.name}${arg}`);
    pc += 1 + n;
  }
  return out;
}

export { ISA };
