// Free quotes answered where they arrive (docs/decisions.md "Free quotes answered
// where they arrive"). A QUOTE without an idempotency_key reads and writes nothing: its answer is made
// from its terms, the price book, the clock and the node's quote key (quotes.ts, quote-token.ts). A
// gateway worker of `svcd start` holds all four, so it answers such a quote itself with the same code
// the core runs, instead of sending it to the core over svc/1. The node-wide per-address window is
// still the core's: `take` counts the quote there before it is made, as the core would count it.
// A QUOTE with an idempotency_key needs the core's records, and goes to the core.
import { ServiceError } from '../errors.ts';
import { commandSpec } from '../protocol/registry.ts';
import type { RateClass } from '../protocol/registry.ts';
import { validateArgs } from '../protocol/validate.ts';
import { commandDone } from './core-metrics.ts';
import { createQuote, quoteView, type QuoteIssuer } from './quotes.ts';

export interface QuoteDeskOptions {
  quoteKey: Uint8Array;
  /** counts one request of the class from this client address in the node's window; rejects with 429 */
  take(klass: RateClass, client: string): Promise<unknown>;
  now?: () => Date;
}

/**
 * A call answered here, or null for a call the core must answer (the gateway's LocalAnswer, core-call.ts).
 * `validated`: the args were checked against the registry's schema already (the HTTP routes); otherwise
 * (MCP's tools) they are checked here.
 */
export type QuoteDesk = (
  cmd: string, args: Record<string, unknown>, client: string | undefined, validated: boolean,
) => Promise<Record<string, unknown>> | null;

export function quoteDesk(opts: QuoteDeskOptions): QuoteDesk {
  const spec = commandSpec('QUOTE')!;
  const issuer: QuoteIssuer = { now: opts.now ?? (() => new Date()), identity: { quoteKey: () => opts.quoteKey } };
  const answer = async (args: Record<string, unknown>, client: string | undefined, validated: boolean) => {
    const t0 = performance.now();
    try {
      // as the core orders it: the address's window before the arguments are looked at (a call for no
      // client is the gateway's own, and nobody's to count)
      if (client !== undefined) await opts.take(spec.rateClass, client);
      if (!validated) validateArgs(spec, args);
      const view = quoteView(createQuote(issuer, args));
      commandDone(spec.name, 'gateway', 'ok', t0);
      return view;
    } catch (e) {
      commandDone(spec.name, 'gateway', e instanceof ServiceError ? e : 'internal', t0);
      throw e;
    }
  };
  return (cmd, args, client, validated) => {
    if (cmd !== spec.name || args.idempotency_key !== undefined) return null;
    return answer(args, client, validated);
  };
}
