// The ten priced services as data: quote path segment, execution command, quote billing (SPEC
// "Public API"), and the inputs — which fields each execution takes (execInput always required;
// auxInput required only with auxRequired), which field a quote may bind by digest (quoteInput:
// MAKE_BCT and VERIFY_BCT), and the range of the input size a quote's `bytes` may declare (null:
// the service reads no input), with what each input is (about). schemas.ts turns this into the
// request schemas. Pure data, and the one GET_PULSE rule both quotes apply (assertPulseFits).
import { ServiceError } from '../errors.ts';

/**
 * Direct-sealing cap (KMS-style, AWS: 4,096 bytes): MAKE_BCT seals at most this much plaintext;
 * a BCT packet is the plaintext plus 52 bytes (4 magic, 8 key id, 24 nonce, 16 tag).
 */
export const BCT_MAX_PLAINTEXT = 4096;
export const BCT_OVERHEAD = 52;
/** GET_PULSE: at most 65,536 bits (8 KiB) of output per execution (docs/protocol.md "Limits"). */
export const PULSE_MAX_BITS = 65536;
/** SEALED_MESSAGE's recipient key (packet_hex) is an X25519 public key; TIMESTAMP_PROOF's input a SHA-256 digest. */
const X25519_PUBLIC_KEY_BYTES = 32;
const SHA256_BYTES = 32;
/** A size-bound input: any size up to what one svc/1 request can carry is quotable. */
const ANY_SIZE = { min: 0, max: 1 << 30 } as const;

export const SERVICES = [
  {
    service: 'get-pulse', command: 'GET_PULSE', quoteBilling: 'free_limited',
    quoteInput: null, execInput: null, bytes: null, maxBits: PULSE_MAX_BITS,
    about: {},
  },
  {
    service: 'make-bct', command: 'MAKE_BCT', quoteBilling: 'free_limited',
    quoteInput: 'plain_hex', execInput: 'plain_hex', bytes: { min: 0, max: BCT_MAX_PLAINTEXT },
    about: { plain_hex: 'plaintext to seal' },
  },
  {
    service: 'verify-bct', command: 'VERIFY_BCT', quoteBilling: 'free_limited',
    quoteInput: 'packet_hex', execInput: 'packet_hex', bytes: { min: 0, max: BCT_MAX_PLAINTEXT + BCT_OVERHEAD },
    about: { packet_hex: 'BCT1 packet to verify and open' },
  },
  {
    service: 'verify-result', command: 'VERIFY_RESULT', quoteBilling: 'free_limited_quote',
    quoteInput: null, execInput: 'packet_hex', bytes: ANY_SIZE,
    about: { packet_hex: 'UTF-8 JSON {service, quote_id, input_digest, output_digest, result_tag}' },
  },
  {
    service: 'attest-event', command: 'ATTEST_EVENT', quoteBilling: 'free_limited_quote',
    quoteInput: null, execInput: 'plain_hex', bytes: ANY_SIZE,
    about: { plain_hex: 'event bytes' },
  },
  {
    service: 'submit-id', command: 'SUBMIT_ID', quoteBilling: 'free_limited_quote',
    quoteInput: null, execInput: 'plain_hex', bytes: ANY_SIZE,
    about: { plain_hex: 'public key or identity document' },
  },
  {
    service: 'bvm-exec', command: 'BVM_EXEC', quoteBilling: 'free_limited_quote',
    quoteInput: null, execInput: 'plain_hex', auxInput: 'packet_hex', bytes: ANY_SIZE,
    about: { plain_hex: 'program image', packet_hex: 'the program\'s input' },
  },
  {
    service: 'sealed-message', command: 'SEALED_MESSAGE', quoteBilling: 'free_limited_quote',
    quoteInput: null, execInput: 'plain_hex', auxInput: 'packet_hex', auxRequired: true,
    bytes: { min: X25519_PUBLIC_KEY_BYTES, max: ANY_SIZE.max },
    about: { plain_hex: 'message', packet_hex: 'recipient X25519 public key (32 bytes)' },
  },
  {
    service: 'timestamp-proof', command: 'TIMESTAMP_PROOF', quoteBilling: 'free_limited_quote',
    quoteInput: null, execInput: 'plain_hex', bytes: { min: SHA256_BYTES, max: SHA256_BYTES },
    about: { plain_hex: 'SHA-256 digest (32 bytes)' },
  },
  {
    service: 'machine-event-log', command: 'MACHINE_EVENT_LOG', quoteBilling: 'free_limited_quote',
    quoteInput: null, execInput: 'plain_hex', bytes: ANY_SIZE,
    about: { plain_hex: 'UTF-8 JSON {count, head_hash, from, to}' },
  },
] as const;

export type Service = (typeof SERVICES)[number];
export type ServiceName = Service['service'];
export type ExecutionCommand = Service['command'];
export type InputField = 'plain_hex' | 'packet_hex';

export const SERVICE_NAMES: readonly ServiceName[] = SERVICES.map((s) => s.service);

/** The MCP endpoint's quote tool of a service: svc_quote_get_pulse for get-pulse. */
export function mcpQuoteTool(service: ServiceName): string {
  return `svc_quote_${service.replaceAll('-', '_')}`;
}

/** The MCP endpoint's paid execution tool of a service, paid per call with x402: svc_execute_get_pulse. */
export function mcpExecuteTool(service: ServiceName): string {
  return `svc_execute_${service.replaceAll('-', '_')}`;
}

/** The MCP endpoint's free tools, offered on every node, in the order it lists them (src/gateway/mcp.ts). */
export const MCP_TOOL_NAMES: readonly string[] = [
  'svc_hello', 'svc_caps', 'svc_pricebook', ...SERVICE_NAMES.map(mcpQuoteTool), 'svc_verify_receipt',
  'svc_sandbox_pulse',
];
/** Its paid execution tools, listed after the free ones and only on a node with x402 on (docs/x402.md). */
export const MCP_PAID_TOOL_NAMES: readonly string[] = SERVICE_NAMES.map(mcpExecuteTool);
/** The MCP endpoint's resources: the manifest, the pricebook and the node keys. */
export const MCP_RESOURCE_NAMES: readonly string[] = ['manifest', 'pricebook', 'node-keys'];

export function serviceOf(command: string): Service | undefined {
  return SERVICES.find((s) => s.command === command);
}

export function serviceByName(name: string): Service | undefined {
  return SERVICES.find((s) => s.service === name);
}

/** The input fields an execution of this service takes, each with whether it is required. */
export function executionInputs(svc: Service): { field: InputField; required: boolean; about: string }[] {
  const about = (f: InputField) => (svc.about as Partial<Record<InputField, string>>)[f] ?? f;
  const out: { field: InputField; required: boolean; about: string }[] = [];
  if (svc.execInput) out.push({ field: svc.execInput, required: true, about: about(svc.execInput) });
  if ('auxInput' in svc) {
    out.push({ field: svc.auxInput, required: 'auxRequired' in svc && svc.auxRequired, about: about(svc.auxInput) });
  }
  return out;
}

/** GET_PULSE's output is exactly ceil(bits / 8) bytes (the unused low bits of the last byte are zero). */
export function pulseOutputBytes(bits: number): number {
  return Math.ceil(bits / 8);
}

/**
 * A GET_PULSE quote (paid or sandbox) must be able to return all its output: a smaller max_output
 * cannot be honoured, and a cut output would no longer recompute from the pulse seed.
 */
export function assertPulseFits(bits: number, maxOutput: number): void {
  const bytes = pulseOutputBytes(bits);
  if (bytes <= maxOutput) return;
  const msg = `bits ${bits} produce ${bytes} bytes of output, above max_output ${maxOutput}`;
  throw new ServiceError('invalid_request', msg, { field: 'max_output' });
}
