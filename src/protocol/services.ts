// The ten priced services: their quote path segment, the execution command each maps to, how a
// quote is billed (SPEC "Public API": free_limited for the first three, free_limited_quote for the
// rest), which input field a quote binds by digest (quoteInput: MAKE_BCT and VERIFY_BCT quotes
// carry their input, SPEC "Quote request") and which field carries the execution's input
// (execInput; for the others the quote binds its size through `bytes`); BVM_EXEC (the program's
// input) and SEALED_MESSAGE (the recipient key) also take packet_hex (auxInput), counted in the
// same `bytes`. Pure data.

export const SERVICES = [
  { service: 'get-pulse', command: 'GET_PULSE', quoteBilling: 'free_limited', quoteInput: null, execInput: null },
  { service: 'make-bct', command: 'MAKE_BCT', quoteBilling: 'free_limited', quoteInput: 'plain_hex', execInput: 'plain_hex' },
  { service: 'verify-bct', command: 'VERIFY_BCT', quoteBilling: 'free_limited', quoteInput: 'packet_hex', execInput: 'packet_hex' },
  { service: 'verify-result', command: 'VERIFY_RESULT', quoteBilling: 'free_limited_quote', quoteInput: null, execInput: 'packet_hex' },
  { service: 'attest-event', command: 'ATTEST_EVENT', quoteBilling: 'free_limited_quote', quoteInput: null, execInput: 'plain_hex' },
  { service: 'submit-id', command: 'SUBMIT_ID', quoteBilling: 'free_limited_quote', quoteInput: null, execInput: 'plain_hex' },
  { service: 'bvm-exec', command: 'BVM_EXEC', quoteBilling: 'free_limited_quote', quoteInput: null, execInput: 'plain_hex', auxInput: 'packet_hex' },
  { service: 'sealed-message', command: 'SEALED_MESSAGE', quoteBilling: 'free_limited_quote', quoteInput: null, execInput: 'plain_hex', auxInput: 'packet_hex' },
  { service: 'timestamp-proof', command: 'TIMESTAMP_PROOF', quoteBilling: 'free_limited_quote', quoteInput: null, execInput: 'plain_hex' },
  { service: 'machine-event-log', command: 'MACHINE_EVENT_LOG', quoteBilling: 'free_limited_quote', quoteInput: null, execInput: 'plain_hex' },
] as const;

/**
 * Direct-sealing cap (KMS-style, AWS: 4,096 bytes): MAKE_BCT seals at most this much plaintext;
 * a BCT packet is the plaintext plus 52 bytes (4 magic, 8 key id, 24 nonce, 16 tag).
 */
export const BCT_MAX_PLAINTEXT = 4096;
export const BCT_OVERHEAD = 52;
export const MAX_QUOTED_INPUT: Partial<Record<string, number>> = { 'make-bct': BCT_MAX_PLAINTEXT, 'verify-bct': BCT_MAX_PLAINTEXT + BCT_OVERHEAD };

export type ServiceName = (typeof SERVICES)[number]['service'];
export type ExecutionCommand = (typeof SERVICES)[number]['command'];
export type QuotedInput = 'plain_hex' | 'packet_hex';

export const SERVICE_NAMES: readonly ServiceName[] = SERVICES.map((s) => s.service);

export function serviceOf(command: string): (typeof SERVICES)[number] | undefined {
  return SERVICES.find((s) => s.command === command);
}

export function serviceByName(name: string): (typeof SERVICES)[number] | undefined {
  return SERVICES.find((s) => s.service === name);
}
