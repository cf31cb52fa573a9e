// RESCAN: the operator asks a rail's watcher to read its chain again from a block (Solana: a slot). The
// request is a record beside the cursor; the watcher that holds the rail (this node, or another node of
// a shared store) applies it to its own cursor at the start of its next pass and deletes it in the same
// batch, so a pass in flight never writes the old cursor over it. Recording a transfer is idempotent
// (deposits.ts), so a rescan credits nothing twice: it finds what a late FROM_BLOCK or an outage missed.
import { ServiceError } from '../../errors.ts';
import { del, put, type Json, type Op } from '../../store/store.ts';
import type { Rail } from '../rails.ts';
import type { CoreContext } from '../context.ts';

export interface RescanRequest extends Json { from_block: number; requested_at: string }

const requestKey = (rail: Rail['rail']) => `rescan:${rail}`;

/** RESCAN: records the request for the rail's watcher; refuses a rail no watcher of this node's config reads. */
export async function requestRescan(
  ctx: CoreContext, rail: Rail['rail'], fromBlock: number,
): Promise<RescanRequest & { rail: string }> {
  if (!ctx.config.watchers.some((w) => w.rail === rail)) {
    const msg = `no watcher reads ${rail} on this node (SVC_WATCH_${rail}_RPC is not set)`;
    throw new ServiceError('invalid_request', msg, { field: 'rail' });
  }
  const req: RescanRequest = { from_block: fromBlock, requested_at: ctx.now().toISOString() };
  await ctx.store.write([put('meta', requestKey(rail), req)]);
  return { rail, ...req };
}

/** The pending request for the rail, if any, and the op that deletes it (for the cursor's batch). */
export async function pendingRescan(
  ctx: CoreContext, rail: Rail['rail'],
): Promise<{ request: RescanRequest; done: Op } | null> {
  const request = (await ctx.store.get('meta', requestKey(rail))) as RescanRequest | undefined;
  return request ? { request, done: del('meta', requestKey(rail)) } : null;
}
