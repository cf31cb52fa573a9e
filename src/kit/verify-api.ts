// @svc/kit/verify: the offline verifiers and the few helpers they are built from.
export {
  ATTEST_PREDICATE_TYPE, IN_TOTO_PAYLOAD_TYPE, SEALED_INFO, keyIdOf, openSealedMessage, pae, pulseOutput,
  verifyAttestation, verifyLogConsistency, verifyLogInclusion, verifyMachineEventLog, verifyPulse, verifyReceipt,
  verifyTimestampProof,
  type AttestationOptions, type AttestationVerdict, type Check, type LogOptions, type NodeKey, type NodeKeys,
  type PulseOptions, type PulseResult, type SealedVerdict, type SignedPulse, type TimestampOptions, type Verdict,
  type VerifyOptions,
} from './verify.ts';
export { ed25519Backend, useEd25519Backend, type Ed25519Backend } from './ed25519.ts';
export { canonicalJson, fromBase64, fromBase64Url, fromHex, toBase64, toBase64Url, toHex } from './bytes.ts';
export { parseCheckpoint, parseNote, parseTlogProof } from './tlog.ts';
export { loadKernels } from './load.ts';
export { verifyWebhook, type WebhookOptions } from './webhook.ts';
