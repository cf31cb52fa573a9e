// The registry's commands that have an HTTP form, each mounted at its registry path: the caller is
// counted before the body is read, the arguments are validated with the registry's schema, and the
// core answers in the `svc` envelope. PULSE is the embedder routes' (its caching: embed-routes.ts).
import type Router from '@koa/router';
import type { Auth } from '../client/client.ts';
import { ServiceError } from '../errors.ts';
import { addressWindowKey } from '../protocol/rate-limit.ts';
import { ALL_COMMANDS, isPaidExecution, needsToken, type CommandSpec } from '../protocol/registry.ts';
import { SERVICE_NAMES } from '../protocol/services.ts';
import { validateArgs } from '../protocol/validate.ts';
import { readJsonBody } from './body.ts';
import { EMBED_COMMANDS } from './embed-routes.ts';
import type { Ctx, GatewayParts, State } from './parts.ts';
import { envelope, toRouterPath } from './routing.ts';
import { paymentHeader, setPaymentRequired, setPaymentResponse } from './x402-headers.ts';

/** The registry commands this module mounts: every one with an HTTP form whose route is not mounted elsewhere. */
const ROUTED_COMMANDS: readonly CommandSpec[] =
  ALL_COMMANDS.filter((c) => c.http && !EMBED_COMMANDS.has(c.name));

export function mountCommandRoutes(router: Router<State>, parts: GatewayParts): void {
  for (const spec of ROUTED_COMMANDS) {
    const path = toRouterPath(spec.http!.path);
    if (spec.http!.method === 'GET') router.get(path, commandRoute(spec, parts));
    else router.post(path, commandRoute(spec, parts));
  }
}

function commandRoute(spec: CommandSpec, { core, limiter, limit, baseUrl }: GatewayParts) {
  const tokened = needsToken(spec);
  const payable = isPaidExecution(spec);
  const takesKey = (spec.args.properties as Record<string, unknown>).idempotency_key !== undefined;
  return async (ctx: Ctx) => {
    const bearer = /^Bearer\s+(\S+)$/i.exec(ctx.get('authorization'))?.[1];
    // before the body is read: a caller with a token is counted per machine by the core once the token
    // checks out, and against its address only if it does not; everyone else against the address now
    if (tokened && bearer) limiter.assertOpen(spec.rateClass, addressWindowKey(ctx.state.client), 'per address');
    else limit(ctx, spec.rateClass);
    const args: Record<string, unknown> = spec.http!.method === 'GET'
      ? knownQuery(spec, ctx.query as Record<string, unknown>)
      : await readJsonBody(ctx.req, ctx.state.client);
    Object.assign(args, ctx.params);
    if (spec.name === 'QUOTE' && !SERVICE_NAMES.includes(args.service as never)) {
      throw new ServiceError('not_found', `no quote endpoint for ${String(args.service)}`);
    }
    const idem = ctx.get('idempotency-key');
    if (idem && takesKey && args.idempotency_key === undefined) args.idempotency_key = idem;
    validateArgs(spec, args);
    const payment = payable ? paymentHeader(ctx) : undefined;
    let auth: Auth | undefined;
    if (bearer || payment) {
      auth = { machine_id: args.machine_id as string | undefined };
      if (bearer) auth.token = bearer;
      if (payment) auth.payment = payment;
    }
    let result: Record<string, unknown>;
    try {
      result = await core.call(spec.name, args, auth, ctx.state.client, true);
    } catch (e) {
      const code = (e as { inner?: ServiceError }).inner?.code;
      if (tokened && bearer && code === 'unauthorized') limit(ctx, spec.rateClass);
      if (payable) setPaymentRequired(ctx, e, baseUrl());
      throw e;
    }
    if (result.idempotent_replayed) ctx.set('Idempotent-Replayed', 'true');
    if (payable) setPaymentResponse(ctx, result);
    envelope(ctx, 'svc', result);
  };
}

// GET routes take their arguments from the query; parameters the command does not take (utm_source,
// cache busters that browsers and crawlers add) are ignored rather than refused.
function knownQuery(spec: CommandSpec, query: Record<string, unknown>): Record<string, unknown> {
  const props = spec.args.properties as Record<string, unknown>;
  return Object.fromEntries(Object.entries(query).filter(([k]) => Object.hasOwn(props, k)));
}
