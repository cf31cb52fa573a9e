// The steps of the CPU ladder (`npm run bench:cpu -- --ladder`, docs/performance.md "The gateway's
// layers"): from the bare anchor to svcd, each step one of svcd's gateway layers more than the step before,
// in the order a free quote meets them. The app steps are ladder.ts at that step; the first is the anchor
// itself (anchor.ts), the last ones svcd. Names only: no servers here.

export interface LadderStep {
  /** what the bench and ladder.ts call it */
  key: string;
  /** the row's label */
  name: string;
  /** what this step adds, and where it comes from in src/ */
  adds: string;
}

/** The steps ladder.ts serves, in order: each one's app is the one before with one more layer. */
export const APP_STEPS: readonly LadderStep[] = [
  { key: 'koa', name: 'koa+router+ajv, in the ladder process',
    adds: 'the anchor\'s app, with every module of the later steps loaded (their heap, not their work)' },
  { key: 'http-server', name: '+ HTTP server',
    adds: 'gateway/http-server.ts listenGateway with svcd\'s limits: timeouts, connection admission, trackResponse' },
  { key: 'request-id', name: '+ request id, client address',
    adds: 'X-Request-Id checked or randomUUID, set as a header; client-address.ts clientAddressResolver' },
  { key: 'rate-limit', name: '+ rate limit',
    adds: 'parts.ts limit(): RateLimiter.check on addressWindowKey, its two headers (svcd\'s rules from config.ts)' },
  { key: 'drain-cors', name: '+ draining, CORS',
    adds: 'front.ts\'s DrainState bookkeeping and embed-routes.ts cors' },
  { key: 'body', name: '+ body budget and read',
    adds: 'body.ts readJsonBody instead of the anchor\'s body reader' },
  { key: 'validate', name: '+ validation',
    adds: 'validate.ts validateArgs with the registry\'s QUOTE spec (and the route\'s service and key checks)' },
  { key: 'quote-desk', name: '+ quote desk',
    adds: 'core/quote-desk.ts behind core-call.ts answeringFirst, its node windows granted in process, as a '
      + 'gateway worker builds it (main.ts), instead of the anchor\'s quote' },
  { key: 'envelope', name: '+ envelope, error mapping',
    adds: 'routing.ts envelope; front.ts\'s try/catch with toHttpError, refuseUnrouted' },
  { key: 'logging', name: '+ logging',
    adds: 'pino as main.ts builds it, at svcd\'s default level (info), as the gateway\'s child logger' },
  { key: 'metrics', name: '+ metrics (= front.ts)',
    adds: 'front.ts itself: the steps above plus svc_http_requests_total and svc_http_request_duration_seconds' },
  { key: 'routes', name: '+ every route (= createGateway)',
    adds: 'gateway/app.ts createGateway: svcd\'s router with all its routes, the real QUOTE route; no core behind' },
  { key: 'own-path', name: '+ the free quote\'s own path (= the gateway)',
    adds: 'gateway/fast-quote.ts ahead of Koa, as svcd listens: the plain free quote never reaches Koa' },
];

export const ANCHOR_STEP: LadderStep = {
  key: 'anchor', name: 'anchor koa+router+ajv', adds: 'bench/service/anchor.ts bare, in its own process',
};

export const SVCD_STEP: LadderStep = {
  key: 'svcd', name: 'svcd, one process',
  adds: 'svcd start, SVC_GATEWAY_PROCESSES=0: the QUOTE answered by the core in process (core.handle)',
};

export const svcdWorkersStep = (k: number): LadderStep => ({
  key: `svcd-k${k}`, name: `svcd, ${k} gateway worker${k === 1 ? '' : 's'}`,
  adds: `svcd start, SVC_GATEWAY_PROCESSES=${k}: the core and every worker counted`,
});
