// The gateway's own /api/v1 routes (the route index, the payment policy, the status) and /readyz, at
// the paths of the public route table (discovery/routes.ts).
import type Router from '@koa/router';
import { PUBLIC_ROUTES, publicRoute } from '../discovery/routes.ts';
import { ServiceError } from '../errors.ts';
import { COMMANDS } from '../protocol/registry.ts';
import { VERSIONS } from '../protocol/versions.ts';
import { edgeStatus } from './core-call.ts';
import type { DrainState } from './drain-state.ts';
import type { GatewayParts, State } from './parts.ts';
import { envelope } from './routing.ts';

/** How long /readyz trusts one HEALTH answer: at most one core call a second, however often it is probed. */
const READY_CACHE_MS = 1000;

// the gateway's own /api/v1 routes, from the one table of routes that are not registry commands
const API_ROUTES = PUBLIC_ROUTES.filter((r) => r.path.startsWith('/api/v1') && !r.aliasOf).map((r) => ({
  method: r.method, path: r.path, auth: r.auth, billing: r.billing, rate_class: r.rateClass, execution: r.execution,
  purpose: r.purpose,
}));

export function mountApiRoutes(router: Router<State>, { free, limit }: GatewayParts, drain: DrainState): void {
  router.get(publicRoute('apiIndex').path, (ctx) => {
    limit(ctx, 'public_low');
    const commands = COMMANDS.filter((c) => c.http).map((c) => ({
      method: c.http!.method, path: c.http!.path, command: c.name, auth: c.auth, billing: c.billing,
      rate_class: c.rateClass, execution: c.execution, purpose: c.purpose,
    }));
    envelope(ctx, 'api', {
      api_version: VERSIONS.api, gateway_version: VERSIONS.gateway, protocol: VERSIONS.coreProtocol,
      routes: [...commands, ...API_ROUTES],
    });
  });
  router.get(publicRoute('apiPayment').path, async (ctx) => {
    limit(ctx, 'public_low');
    const info = await free('PAYMENT_INFO', {}, ctx.state.client);
    const rails = info.rails as { rail: string; address: string; network: string; asset: string; decimals: number }[];
    ctx.body = {
      policy: 'settlement is crypto only; svcC is an internal reference unit (1.00 USD reference), not a token',
      unit_policy: 'internal_quote_reference_not_parity_not_backed_not_redeemable_not_yield',
      automated_rails: rails.map((r) => `${r.asset}/${r.network}`), reserved_rails: [],
      wallets: Object.fromEntries(rails.map((r) => [r.rail, r.address])),
      rails,
    };
  });
  router.get(publicRoute('apiStatus').path, async (ctx) => {
    limit(ctx, 'public_low');
    envelope(ctx, 'api', {
      gateway: { status: 'ok', version: VERSIONS.gateway, api_version: VERSIONS.api },
      edge: await edgeStatus(free, ctx.state.client),
    });
  });

  // readiness for load balancers and orchestrators: not rate limited (probes), and at most one core
  // call a second whatever the probing rate
  let health: { at: number; ready: Promise<boolean> } | null = null;
  router.get(publicRoute('readyz').path, async (ctx) => {
    if (drain.draining) {
      throw new ServiceError('service_unavailable', 'this gateway is shutting down: send traffic elsewhere');
    }
    if (!health || Date.now() - health.at > READY_CACHE_MS) {
      const ready = free('HEALTH', {}, null).then((h) => h.status === 'ok', () => false);
      health = { at: Date.now(), ready };
    }
    if (!(await health.ready)) throw new ServiceError('service_unavailable', 'the core is not serving');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { ok: true, status: 'ready' };
  });
}
