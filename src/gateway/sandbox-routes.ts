// The sandbox over HTTP: anonymous, free, limited, GET_PULSE only. Each route is the public route
// table's (discovery/routes.ts, path from the registry) and calls its SANDBOX_* command: the state is
// the core's, so every gateway process in front of one core serves the same quotes and receipts.
import type Router from '@koa/router';
import { PUBLIC_ROUTES } from '../discovery/routes.ts';
import { commandSpec } from '../protocol/registry.ts';
import { validateArgs } from '../protocol/validate.ts';
import { readJsonBody } from './body.ts';
import type { Ctx, GatewayParts, State } from './parts.ts';
import { envelope, toRouterPath } from './routing.ts';

export function mountSandboxRoutes(router: Router<State>, { core, limit }: GatewayParts): void {
  for (const route of PUBLIC_ROUTES.filter((r) => r.tag === 'Sandbox')) {
    const spec = commandSpec(route.command!)!;
    const params = Object.keys(route.params ?? {});
    router.post(toRouterPath(route.path), async (ctx: Ctx) => {
      limit(ctx, 'public_low');
      const args = await readJsonBody(ctx.req, ctx.state.client);
      for (const p of params) args[p] = ctx.params[p];
      validateArgs(spec, args);
      envelope(ctx, 'api', await core.call(spec.name, args, undefined, ctx.state.client, true));
    });
  }
}
