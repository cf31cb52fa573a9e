// The gateway's own /api/v1 routes (the route index, the payment policy, the status) and /readyz, at
// the paths of the public route table (discovery/routes.ts).
import type Router from '@koa/router';
import { paymentPolicy, routeIndex, type PaymentRail } from '../discovery/documents.ts';
import { publicRoute } from '../discovery/routes.ts';
import { ServiceError } from '../errors.ts';
import { VERSIONS } from '../protocol/versions.ts';
import { edgeStatus } from './core-call.ts';
import type { DrainState } from './drain-state.ts';
import type { GatewayParts, State } from './parts.ts';
import { envelope } from './routing.ts';

/** How long /readyz trusts one HEALTH answer: at most one core call a second, however often it is probed. */
const READY_CACHE_MS = 1000;

export function mountApiRoutes(router: Router<State>, { free, limit }: GatewayParts, drain: DrainState): void {
  router.get(publicRoute('apiIndex').path, (ctx) => {
    limit(ctx, 'public_low');
    envelope(ctx, 'api', routeIndex());
  });
  router.get(publicRoute('apiPayment').path, async (ctx) => {
    limit(ctx, 'public_low');
    const info = await free('PAYMENT_INFO', {}, ctx.state.client);
    ctx.body = paymentPolicy(info.rails as PaymentRail[], info.x402 ?? null);
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
