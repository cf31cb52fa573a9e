// ROTATE_NODE_KEY (docs/operations.md "Key rotation"): the node's signing, result-tag and BCT keys
// are replaced at once; the retired ones stay in the key set with their windows, so receipts, pulses,
// checkpoints, result tags and BCT packets made before still verify. The first pulse under the new
// key is emitted at once, so the chain shows the switch. The quote key and the edge certificate are
// not rotated here (quotes live minutes; the certificate has its own pin, docs/security.md). The new key
// set is published in the store, for the other nodes of a shared store (receipts.ts).
import type { CoreContext } from './context.ts';
import { publishNodeKeys } from './receipts.ts';

export async function rotateNodeKey(ctx: CoreContext): Promise<Record<string, unknown>> {
  const r = ctx.identity.rotate(ctx.now());
  // what this rotation made, read before any await: another rotation meanwhile would otherwise lend this
  // reply its key (a key_id with another key's public key)
  const publicKey = ctx.identity.signer().publicKey;
  const keySet = ctx.identity.keySet();
  // the other nodes of a shared store verify this node's receipts with its published keys: the new set
  await publishNodeKeys(ctx.store, ctx.identity, ctx.now());
  const pulse = await ctx.chain.next();
  return {
    node_id: ctx.identity.nodeId,
    rotated_at: r.rotated_at,
    retired_key_id: r.retired,
    key_id: r.current,
    public_key: publicKey,
    first_pulse_index: pulse.pulse.index,
    key_set: keySet,
    publish: 'the manifest changed: run `svcd manifest` and update the DNS TXT record; discovery documents '
      + 'show the new key set within a minute (the gateway caches node facts)',
  };
}
