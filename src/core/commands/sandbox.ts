// The anonymous sandbox's commands: the HTTP gateway's own calls (registry access `gateway`), answered
// from the core's Sandbox so every gateway process in front of this core shares one table.
import { clientKey } from '../../protocol/rate-limit.ts';
import type { Handler } from '../call.ts';

export const SANDBOX_COMMANDS: Record<string, Handler> = {
  SANDBOX_QUOTE: (n, { args, client }) => {
    const q = args as { machine_id: string; bits: number; max_output: number };
    return n.sandbox.quote(q, clientKey(client), n.ctx.now().getTime());
  },
  SANDBOX_ACCEPT: (n, { args }) =>
    n.sandbox.accept(args.quote_id as string, args.machine_id as string, n.ctx.now().getTime()),
  SANDBOX_EXECUTE: (n, { args, client }) =>
    n.sandbox.execute(args.quote_id as string, args.machine_id as string, clientKey(client), n.ctx.now().getTime()),
  SANDBOX_VERIFY: (n, { args }) =>
    n.sandbox.verify(args.receipt_id as string, args.machine_id as string, n.ctx.now().getTime()),
};
