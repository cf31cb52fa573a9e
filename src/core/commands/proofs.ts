// Proofs: the paid executions (each runs its executor, executors/index.ts) and a machine's receipts,
// fetched or verified against the key that signed them.
import { ServiceError } from '../../errors.ts';
import { ALL_COMMANDS, isPaidExecution } from '../../protocol/registry.ts';
import type { ExecutionCommand } from '../../protocol/services.ts';
import { argsAs, type Handler, type Reply } from '../call.ts';
import type { CoreContext } from '../context.ts';
import { execute, type ExecutionArgs } from '../executions.ts';
import { signerKeys, verifyReceipt, type SignedReceipt } from '../receipts.ts';

async function receipt(ctx: CoreContext, receiptId: string, machineId: string): Promise<Reply> {
  const r = await ctx.store.get<SignedReceipt>('receipts', receiptId);
  if (!r || r.receipt.machine_id !== machineId) {
    throw new ServiceError('not_found', `no receipt ${receiptId} for this machine`);
  }
  // signed here or by another node of a shared store (its published keys)
  const v = verifyReceipt(await signerKeys(ctx.store, ctx.identity, r.receipt.node_id), r);
  // the key the receipt names, with its window: after a key rotation, not the current one (a key
  // the set does not hold: the current one, and valid false with unknown_key)
  const key = v.key;
  return {
    receipt_id: r.receipt.receipt_id, receipt: r.receipt, signature: r.signature, alg: 'Ed25519',
    public_key: key?.public_key ?? ctx.identity.signer().publicKey, key_id: key?.key_id ?? ctx.identity.keyId,
    valid: v.valid,
    ...(key ? { key_valid_from: key.valid_from, key_valid_until: key.valid_until } : {}),
    ...(v.reason ? { reason: v.reason } : {}),
    signed_bytes: 'RFC 8785 canonical JSON of `receipt` (UTF-8); signature is base64url Ed25519 over those bytes',
  };
}

const receiptHandler: Handler = (n, { args }) => receipt(n.ctx, args.receipt_id as string, args.machine_id as string);

/** Every paid execution of the registry runs through execute() (the sandbox's has its own, sandbox.ts). */
const paid = ALL_COMMANDS.filter(isPaidExecution);
const executions: Record<string, Handler> = Object.fromEntries(paid.map((c) => {
  const run: Handler = (n, { args, auth, idem }) => (n.x402
    ? n.x402.execute(c.name as ExecutionCommand, argsAs<ExecutionArgs>(args), auth, idem?.seal)
    : execute(n.ctx, c.name as ExecutionCommand, argsAs<ExecutionArgs>(args), idem?.seal));
  return [c.name, run];
}));

export const PROOF_COMMANDS: Record<string, Handler> = {
  ...executions,
  GET_RECEIPT: receiptHandler,
  VERIFY_RECEIPT: receiptHandler,
};
