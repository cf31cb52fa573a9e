// x402 version 2 on the wire (docs/x402.md): the HTTP headers a per-request payment travels in, their
// encoding (base64 of JSON), and the shapes of what they carry, as the x402 specification defines them.
// Only the `exact` scheme is taken — on EVM chains (an EIP-3009 transferWithAuthorization) and on Solana (a
// partially signed transaction) — and only version 2: a version 1 client reads its requirements from the 402's
// body, which here is the contract's ApiError.

export const X402_VERSION = 2;
/** server → client, with 402: what a payment must be (PaymentRequired) */
export const PAYMENT_REQUIRED_HEADER = 'PAYMENT-REQUIRED';
/** client → server: the signed payment (PaymentPayload) */
export const PAYMENT_SIGNATURE_HEADER = 'PAYMENT-SIGNATURE';
/** server → client, with the paid answer: the settlement (SettleResponse) */
export const PAYMENT_RESPONSE_HEADER = 'PAYMENT-RESPONSE';
/** A payment header longer than this is refused unread (a real one is under 2 KiB). */
export const MAX_PAYMENT_CHARS = 16 * 1024;

export interface ResourceInfo { url: string; description?: string; mimeType?: string }

export interface PaymentRequirements {
  scheme: 'exact';
  /** CAIP-2, e.g. eip155:8453 */
  network: string;
  /** the token contract */
  asset: string;
  /** token base units, a decimal string */
  amount: string;
  payTo: string;
  maxTimeoutSeconds: number;
  /** the token's EIP-712 domain (name, version) and what this node needs back (quote_id) */
  extra: Record<string, unknown>;
}

export interface PaymentRequired {
  x402Version: number;
  error?: string;
  resource: ResourceInfo;
  accepts: PaymentRequirements[];
}

/** EIP-3009's TransferWithAuthorization message; numbers as decimal strings, nonce as 0x + 64 hex. */
export interface Authorization {
  from: string; to: string; value: string; validAfter: string; validBefore: string; nonce: string;
}

export interface ExactEvmPayload { signature: string; authorization: Authorization }

/** A Solana transaction (base64 of its wire form) signed by the payer, the fee payer's signature left empty. */
export interface ExactSvmPayload { transaction: string }

export interface PaymentPayload<P extends ExactEvmPayload | ExactSvmPayload = ExactEvmPayload | ExactSvmPayload> {
  x402Version: number;
  resource?: ResourceInfo;
  accepted: PaymentRequirements;
  payload: P;
}

export const isEvmPayload = (p: PaymentPayload): p is PaymentPayload<ExactEvmPayload> => 'authorization' in p.payload;
export const isSvmPayload = (p: PaymentPayload): p is PaymentPayload<ExactSvmPayload> => 'transaction' in p.payload;

export interface SettleResponse {
  success: boolean;
  errorReason?: string;
  payer?: string;
  transaction: string;
  network: string;
}

export const encodeHeader = (v: object): string => Buffer.from(JSON.stringify(v), 'utf8').toString('base64');

/** What a result an x402 payment paid says of its settlement (its `payment`), or null for any other result. */
export function settleResponseOf(result: Record<string, unknown>): SettleResponse | null {
  const p = result.payment as { transaction: string; network: string; payer: string } | undefined;
  return p ? { success: true, transaction: p.transaction, network: p.network, payer: p.payer } : null;
}

const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const DECIMAL = /^(0|[1-9][0-9]{0,77})$/;
const HEX32 = /^0x[0-9a-fA-F]{64}$/;
const HEX_SIGNATURE = /^0x([0-9a-fA-F]{2}){65,4096}$/;
/** base64 of at most 1,232 bytes: the largest transaction Solana takes */
const SOLANA_TX = /^[A-Za-z0-9+/]{4,1644}={0,2}$/;

/** Why a payment header is not a payment this node can take (x402's error reason names). */
export class PaymentDecodeError extends Error {
  constructor(readonly reason: string, message: string) { super(message); this.name = 'PaymentDecodeError'; }
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

function authorizationOf(a: unknown): Authorization {
  if (!isObject(a)) throw new PaymentDecodeError('invalid_payload', 'payload.authorization is not an object');
  const str = (k: string, re: RegExp, what: string): string => {
    const v = a[k];
    if (typeof v !== 'string' || !re.test(v)) {
      throw new PaymentDecodeError('invalid_payload', `payload.authorization.${k} must be ${what}`);
    }
    return v;
  };
  return {
    from: str('from', HEX_ADDRESS, 'an address'), to: str('to', HEX_ADDRESS, 'an address'),
    value: str('value', DECIMAL, 'a decimal integer'), validAfter: str('validAfter', DECIMAL, 'a decimal integer'),
    validBefore: str('validBefore', DECIMAL, 'a decimal integer'), nonce: str('nonce', HEX32, '0x and 64 hex digits'),
  };
}

function requirementsOf(r: unknown): PaymentRequirements {
  if (!isObject(r)) throw new PaymentDecodeError('invalid_payload', 'accepted is not an object');
  const { scheme, network, asset, amount, payTo, maxTimeoutSeconds, extra } = r;
  if (typeof scheme !== 'string' || typeof network !== 'string' || typeof asset !== 'string'
    || typeof amount !== 'string' || typeof payTo !== 'string' || typeof maxTimeoutSeconds !== 'number') {
    throw new PaymentDecodeError('invalid_payload', 'accepted must carry scheme, network, asset, amount, payTo, '
      + 'maxTimeoutSeconds as the 402 gave them');
  }
  if (scheme !== 'exact') {
    throw new PaymentDecodeError('unsupported_scheme', `scheme ${scheme.slice(0, 32)} is not taken`);
  }
  return {
    scheme, network, asset, amount, payTo, maxTimeoutSeconds, extra: isObject(extra) ? extra : {},
  };
}

/**
 * A PAYMENT-SIGNATURE (or X-PAYMENT) header's PaymentPayload, its shape checked; what it pays for is the
 * caller's to check. Throws PaymentDecodeError.
 */
export function decodePayment(header: string): PaymentPayload {
  if (header.length > MAX_PAYMENT_CHARS) {
    throw new PaymentDecodeError('invalid_payload', `the payment header exceeds ${MAX_PAYMENT_CHARS} characters`);
  }
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(header.trim(), 'base64').toString('utf8'));
  } catch {
    throw new PaymentDecodeError('invalid_payload', 'the payment header is not base64 of a JSON object');
  }
  if (!isObject(v)) {
    throw new PaymentDecodeError('invalid_payload', 'the payment header is not base64 of a JSON object');
  }
  // version 1 clients read their requirements from the 402's body, which here is the contract's ApiError
  if (v.x402Version !== X402_VERSION) throw new PaymentDecodeError('invalid_x402_version', 'x402Version must be 2');
  const accepted = requirementsOf(v.accepted);
  const p = v.payload;
  if (!isObject(p)) throw new PaymentDecodeError('invalid_payload', 'payload is not an object');
  if (accepted.network.startsWith('solana:')) {
    if (typeof p.transaction !== 'string' || !SOLANA_TX.test(p.transaction)) {
      throw new PaymentDecodeError('invalid_exact_svm_payload_transaction',
        'payload.transaction must be base64 of a Solana transaction (at most 1,232 bytes)');
    }
    return { x402Version: v.x402Version, accepted, payload: { transaction: p.transaction } };
  }
  if (typeof p.signature !== 'string' || !HEX_SIGNATURE.test(p.signature)) {
    throw new PaymentDecodeError('invalid_payload', 'payload.signature must be 0x and hex of 65 bytes or more');
  }
  return {
    x402Version: v.x402Version, accepted,
    payload: { signature: p.signature, authorization: authorizationOf(p.authorization) },
  };
}
