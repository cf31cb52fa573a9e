// The flags of the priced services' commands (quote-<service>, <service>, run <service>), from the
// request schemas and the services table: a flag exists exactly when its field does, its help says
// what the schema says, and input given as hex or as a file becomes the field the request carries.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { Schema } from '../protocol/schemas.ts';
import type { InputField, Service } from '../protocol/services.ts';
import { UsageError } from './output.ts';

/** The machine_id the examples use. */
export const M = '--machine-id my-agent';

/** A flag's help: what it is, then the bounds and the default its schema sets ("bits (min 1, default 65536)"). */
export function described(what: string, s: Schema): string {
  const facts = [
    s.minimum === undefined ? '' : `min ${String(s.minimum)}`,
    s.default === undefined ? '' : `default ${String(s.default)}`,
    s.maximum === undefined ? '' : `max ${String(s.maximum)}`,
    s.maxLength === undefined ? '' : `max ${String(s.maxLength)}`,
  ].filter((f) => f !== '');
  return facts.length ? `${what} (${facts.join(', ')})` : what;
}

export const flagOf = (field: InputField) => (field === 'plain_hex' ? '--plain-hex' : '--packet-hex');

/** --plain-hex/--plain-file or --packet-hex/--packet-file for one input field. */
export function inputFlags(c: Command, field: InputField, about: string): void {
  const [hexFlag, fileFlag] = field === 'plain_hex'
    ? ['--plain-hex', '--plain-file']
    : ['--packet-hex', '--packet-file'];
  c.option(`${hexFlag} <hex>`, `${about}, as hex`).option(`${fileFlag} <file>`, `${about}, read from a file`);
}

/** The input fields given, as hex (a file is read and hex-encoded). */
export function inputHex(
  o: { plainHex?: string; plainFile?: string; packetHex?: string; packetFile?: string },
): Partial<Record<InputField, string>> {
  const out: Partial<Record<InputField, string>> = {};
  if (o.plainHex && o.plainFile) throw new UsageError('give --plain-hex or --plain-file, not both');
  if (o.packetHex && o.packetFile) throw new UsageError('give --packet-hex or --packet-file, not both');
  if (o.plainHex) out.plain_hex = o.plainHex;
  if (o.plainFile) out.plain_hex = readFileSync(o.plainFile).toString('hex');
  if (o.packetHex) out.packet_hex = o.packetHex;
  if (o.packetFile) out.packet_hex = readFileSync(o.packetFile).toString('hex');
  return out;
}

export const clean = (o: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/** A quote command's examples, from what its schema requires. */
export function quoteExamples(s: Service): [string, string?][] {
  const base = `svc ${M} quote-${s.service}`;
  if (s.bytes === null) return [[`${base} --bits 256`, `${s.command} reads no input: bits only`]];
  if (s.bytes.min === s.bytes.max) return [[base, `the input is ${s.bytes.min} bytes`]];
  if (s.quoteInput) {
    return [
      [`${base} ${flagOf(s.quoteInput)} 68656c6c6f`, 'binds this exact input'],
      [`${base} --bytes 5`, 'or only its size'],
    ];
  }
  return [[`${base} --bytes 64`, 'the most input bytes the execution may send']];
}

/** What a quote binds, in the words of its schema (quoteBodySchema). */
export function quoteHelp(s: Service): string {
  if (s.bytes === null) {
    return `${s.command} reads no input: the quote prices bits only (max_output must cover bits/8 bytes).`;
  }
  if (s.bytes.min === s.bytes.max) return `Input: exactly ${s.bytes.min} bytes (--bytes defaults to it).`;
  if (s.quoteInput) {
    return `Input: give ${flagOf(s.quoteInput)} (or its file), and the execution must send that exact input;\n`
      + `or --bytes alone, and the execution must send exactly that many bytes (at most ${s.bytes.max}).`;
  }
  return `Input: --bytes is required: the most input bytes the execution may send (${s.bytes.min}..${s.bytes.max}).`;
}
