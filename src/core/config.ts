// Configuration from the environment (README "Configuration"): every variable optional, parsed
// and validated once at start; a bad value stops svcd with a message naming the variable.
import { webhookConfig, type WebhookConfig } from './webhook-config.ts';
import { x402Config, type X402Config } from './x402/config.ts';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { defaultShare } from '../protocol/budgets.ts';
import type { ClusterTlsFiles } from '../protocol/cluster-tls.ts';
import { DEFAULT_RATES, parseRate, type RateRules } from '../protocol/rate-limit.ts';
import { NO_ADDRESS, RAILS, RAIL_FAMILY, isSolanaAddress, type ChainFamily, type Rail } from './rails.ts';
import { isTronAddress, tronToHex } from './watchers/tron-address.ts';

/** How long past its expiry an invoice keeps its amount (SVC_INVOICE_AMOUNT_HOLD_MS), unless configured. */
export const DEFAULT_AMOUNT_HOLD_MS = 2 * 3_600_000;
/** Unexpired invoices one client address may hold (SVC_MAX_OPEN_INVOICES_PER_ADDRESS), unless configured. */
export const DEFAULT_OPEN_INVOICES_PER_ADDRESS = 100;

import { EVM_ADDRESS, EVM_FINALITIES, envInt as int } from './env-values.ts';
import type { Finality } from './finality.ts';

export type { Finality };

/** One chain watcher (SVC_WATCH_<RAIL>_*): off unless its RPC is set. */
export type WatcherConfig = EvmWatcherConfig | SolanaWatcherConfig;

export interface WatchCommon {
  rail: Rail['rail'];
  /** JSON-RPC endpoint over HTTP(S); may carry a provider key, so it is never logged or published */
  rpcUrl: string;
  pollMs: number;
  maxBackoffMs: number;
}

/** USDC on Base (`evm`) and USDT on TRON (`tron`: the same watcher over TRON's Ethereum-style JSON-RPC). */
export interface EvmWatcherConfig extends WatchCommon {
  family: Exclude<ChainFamily, 'solana'>;
  /** the token contract (0x + 40 hex, lower case; TRON: converted from its `T…` form) */
  token: string;
  /** the rail's receiving address (SVC_WALLET_<RAIL>, 0x + 40 hex, lower case; TRON: from `T…`) */
  address: string;
  finality: Finality;
  confirmations: number;
  /** the first block to scan when no cursor is stored yet (null: the trusted head at first start) */
  fromBlock: number | null;
  /** blocks per eth_getLogs request (providers cap it) */
  maxRange: number;
  /** blocks behind the cursor scanned again on every pass (reorgs, reorg-after-credit reports) */
  reorgWindow: number;
}

/** USDC and USDT on Solana: SPL token transfers to the rail's token account(s), at `finalized` commitment. */
export interface SolanaWatcherConfig extends WatchCommon {
  family: 'solana';
  /** the token mint (base58) */
  mint: string;
  /** the rail's wallet (SVC_WALLET_<RAIL>, base58): the owner of the watched token account */
  owner: string;
  /** token accounts to watch (base58); null: the owner's associated token account for the mint */
  tokenAccounts: string[] | null;
  /** the first slot read when no cursor is stored yet (null: the finalized slot at first start) */
  fromSlot: number | null;
  /** signatures per getSignaturesForAddress request (at most 1000) */
  pageSize: number;
}

export interface Config {
  dataDir: string;
  /** SVC_STORE: null for LevelDB in the data dir (the default), or a postgres:// URL (docs/scale-out.md) */
  store: string | null;
  edgeHost: string;
  edgePort: number;
  /** the edge port to publish (SVC_PUBLIC_EDGE_PORT) when clients reach the edge on another port than it binds */
  publicEdgePort: number | null;
  /** 127.0.0.1 unless `clusterTls` is set (then any address: every peer must hold a cluster certificate) */
  backendHost: string;
  backendPort: number;
  /**
   * SVC_CLUSTER_CA, SVC_CLUSTER_CERT, SVC_CLUSTER_KEY (paths): mutual TLS on the backend, between the
   * gateways and the core nodes of a cluster (docs/scale-out.md "Across hosts"); null: plain TCP on loopback
   */
  clusterTls: ClusterTlsFiles | null;
  httpHost: string;
  httpPort: number;
  baseUrl: string | null;
  tlsCert: string | null;
  tlsKey: string | null;
  rails: Rail[];
  /**
   * SVC_PAYMENTS: `live` (the default) opens invoices only on rails with a receiving address; `local`
   * (for trying svc out: the README's quick start) also on the others, settled by the operator by hand
   */
  payments?: 'live' | 'local';
  /** chain watchers, one per configured rail (none by default: admin settlement only) */
  watchers: WatcherConfig[];
  /** x402 per-request payment of the paid executions (SVC_X402_*, docs/x402.md); null: off */
  x402?: X402Config | null;
  /** webhook endpoints and their signing secret (SVC_WEBHOOK_URLS, SVC_WEBHOOK_SECRET); null: none */
  webhooks?: WebhookConfig | null;
  readyFile: string | null;
  pulsePeriodMs: number;
  invoiceTtlMs: number;
  /**
   * How long an invoice's amount stays with it past its expiry, settled or not: until then no new invoice
   * on the rail gets that amount, so a payment still on its way can only match the invoice it was for.
   * Optional for in-process test contexts (invoices.ts's default applies).
   */
  invoiceAmountHoldMs?: number;
  /** pending invoices one machine_id may hold at once (each holds a unique amount on its rail) */
  maxOpenInvoices: number;
  /** unexpired invoices one client address may hold, whatever the machine_ids (optional in test contexts) */
  maxOpenInvoicesPerAddress?: number;
  /**
   * Largest amount suffix in base units (1..99,999, DESIGN.md §4). Never from the environment: tests
   * narrow it so that nodes' picks collide (test/store/postgres-cluster-state.test.ts).
   */
  invoiceSuffixMax?: number;
  /**
   * Largest suffix of the wider range tried once every amount up to invoiceSuffixMax is held (default 999,999;
   * with invoiceSuffixMax set and this not, invoiceSuffixMax: a test that narrows the space narrows it whole).
   */
  invoiceWideSuffixMax?: number;
  sweepIntervalMs: number;
  kernelThreads: number | undefined;
  idleTimeoutMs: number;
  lineTimeoutMs: number;
  maxInFlightPerConnection: number;
  logLevel: string;
  /** rate limits per class (SVC_RATE_PUBLIC_LOW, SVC_RATE_PAID_EXECUTION: LIMIT/SECONDS) */
  rates: RateRules;
  /** proxies in front of the gateway whose X-Forwarded-For entries count (0: never trust the header) */
  trustProxyHops: number;
  /** peers allowed to speak as a proxy (addresses or CIDRs); X-Forwarded-For from others is ignored */
  trustedProxies: string[];
  /** live sandbox quotes and receipts per client address */
  sandboxMaxPerClient: number;
  /**
   * `svcd start`: HTTP gateway processes in front of the core (SVC_GATEWAY_PROCESSES). 0: the gateway
   * runs in the core's process and calls it directly; K > 0: K node:cluster workers share the HTTP
   * port and reach the core over the loopback backend (docs/operations.md "Topology").
   */
  gatewayProcesses: number;
  /** how long an idempotency key replays its reply; the record is deleted after it */
  idempotencyTtlMs: number;
  // resource limits (docs/operations.md "Resource limits")
  /** svc/1 edge: a TLS handshake not finished within this is destroyed */
  handshakeTimeoutMs: number;
  edgeMaxConnections: number;
  edgeMaxConnectionsPerAddress: number;
  /** the loopback backend serves the gateways' pooled connections only */
  backendMaxConnections: number;
  /** the admin socket serves svc-admin */
  adminMaxConnections: number;
  /** edge and HTTP: how long a connection over its address's cap waits, unread, for a slot; 0: refused at once */
  connectionQueueMs: number;
  /** SIGTERM: how long in-flight work may take to finish before the connections still open are closed */
  drainTimeoutMs: number;
  /**
   * a gateway's svc/1 connection to a core node that has answered nothing (not even the HEALTH it sends
   * after half this time) for this long while calls wait is dropped and the node marked down (a hung
   * node: stopped, wedged, its host unreachable without a reset)
   */
  coreReplyTimeoutMs: number;
  /** `svcd gateway`: how often each core node is asked HEALTH (0: never); one silent that long is marked down */
  coreProbeMs: number;
  /** bytes of unfinished svc/1 lines held across all edge connections */
  lineBudgetBytes: number;
  /** of lineBudgetBytes, what one client address may hold at once */
  lineBudgetPerAddressBytes: number;
  httpHeadersTimeoutMs: number;
  /** the whole HTTP request, headers and body */
  httpRequestTimeoutMs: number;
  httpKeepAliveTimeoutMs: number;
  httpMaxConnections: number;
  /** 0 turns the per-address cap off (it is off anyway with trustProxy: every peer is the proxy) */
  httpMaxConnectionsPerAddress: number;
  /** bytes of HTTP request bodies being read, across all requests */
  bodyBudgetBytes: number;
  /** of bodyBudgetBytes, what one client address may hold at once */
  bodyBudgetPerAddressBytes: number;
  /** GET /metrics listener (docs/operations.md "Metrics"): off (null) unless SVC_METRICS_PORT is set */
  metricsHost: string;
  metricsPort: number | null;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** SVC_LOG_LEVEL: one of pino's levels (checked here, so a typo names the variable, not pino). */
function logLevel(raw: string | undefined): string {
  if (!raw) return 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(raw)) {
    throw new Error(`SVC_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got ${JSON.stringify(raw)})`);
  }
  return raw;
}

/** Linux's sun_path holds 108 bytes with its NUL: a longer socket path is cut, and binds elsewhere. */
const UNIX_SOCKET_PATH_MAX = 107;

/** SVC_BASE_URL: an absolute http(s) URL without query or fragment (discovery documents build on it). */
function baseUrlOf(raw: string | undefined): string | null {
  if (!raw) return null;
  let u: URL | null = null;
  try { u = new URL(raw); } catch { /* refused below */ }
  if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:') || !u.hostname || u.search || u.hash
    || /[?#]/.test(raw)) {
    const got = JSON.stringify(raw);
    throw new Error(`SVC_BASE_URL must be an absolute http(s) URL without query or fragment (got ${got})`);
  }
  return raw;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = resolve(env.SVC_DATA_DIR || './data');
  const adminSocket = `${dataDir}/admin.sock`;
  if (Buffer.byteLength(adminSocket) > UNIX_SOCKET_PATH_MAX) {
    const bytes = Buffer.byteLength(adminSocket);
    throw new Error(`SVC_DATA_DIR is too long for its admin socket: ${adminSocket} is ${bytes} bytes, and a unix `
      + `socket path holds at most ${UNIX_SOCKET_PATH_MAX}; choose a shorter data dir`);
  }
  const clusterTls = clusterTlsFiles(env);
  const backendHost = env.SVC_BACKEND_HOST || '127.0.0.1';
  if (backendHost !== '127.0.0.1' && !clusterTls) {
    throw new Error(`SVC_BACKEND_HOST must be 127.0.0.1 while the backend is plain TCP (got ${backendHost}): `
      + 'another address needs mutual TLS (SVC_CLUSTER_CA, SVC_CLUSTER_CERT, SVC_CLUSTER_KEY)');
  }
  const cert = env.SVC_TLS_CERT || null, key = env.SVC_TLS_KEY || null;
  if ((cert === null) !== (key === null)) throw new Error('SVC_TLS_CERT and SVC_TLS_KEY must be set together');
  const rails: Rail[] = RAILS.map((r) => ({ ...r, address: env[`SVC_WALLET_${r.rail}`] || NO_ADDRESS }));
  return {
    dataDir,
    store: storeUrl(env.SVC_STORE),
    edgeHost: env.SVC_EDGE_HOST || '::',
    edgePort: int(env, 'SVC_EDGE_PORT', 9443, 0, 65535),
    publicEdgePort: env.SVC_PUBLIC_EDGE_PORT ? int(env, 'SVC_PUBLIC_EDGE_PORT', 0, 1, 65535) : null,
    backendHost,
    clusterTls,
    backendPort: int(env, 'SVC_BACKEND_PORT', 9444, 0, 65535),
    httpHost: env.SVC_HTTP_HOST || '127.0.0.1',
    httpPort: int(env, 'SVC_HTTP_PORT', 8080, 0, 65535),
    baseUrl: baseUrlOf(env.SVC_BASE_URL),
    tlsCert: cert ? resolve(cert) : null,
    tlsKey: key ? resolve(key) : null,
    rails,
    payments: paymentsMode(env.SVC_PAYMENTS),
    watchers: watchers(env, rails),
    webhooks: webhookConfig(env),
    x402: x402Config(env),
    readyFile: env.SVC_READY_FILE ? resolve(env.SVC_READY_FILE) : null,
    pulsePeriodMs: int(env, 'SVC_PULSE_PERIOD_MS', 60_000, 200, 86_400_000),
    invoiceTtlMs: int(env, 'SVC_INVOICE_TTL_MS', 3_600_000, 1000, 30 * 86_400_000),
    invoiceAmountHoldMs: int(env, 'SVC_INVOICE_AMOUNT_HOLD_MS', DEFAULT_AMOUNT_HOLD_MS, 60_000, 30 * 86_400_000),
    maxOpenInvoices: int(env, 'SVC_MAX_OPEN_INVOICES', 20, 1, 10_000),
    maxOpenInvoicesPerAddress: int(env, 'SVC_MAX_OPEN_INVOICES_PER_ADDRESS', DEFAULT_OPEN_INVOICES_PER_ADDRESS, 1,
      1_000_000),
    sweepIntervalMs: int(env, 'SVC_SWEEP_INTERVAL_MS', 1000, 50, 3_600_000),
    kernelThreads: env.SVC_KERNEL_THREADS ? int(env, 'SVC_KERNEL_THREADS', 1, 1, 256) : undefined,
    idleTimeoutMs: int(env, 'SVC_IDLE_TIMEOUT_MS', 120_000, 100, 86_400_000),
    lineTimeoutMs: int(env, 'SVC_LINE_TIMEOUT_MS', 10_000, 50, 600_000),
    maxInFlightPerConnection: int(env, 'SVC_MAX_IN_FLIGHT', 32, 1, 4096),
    logLevel: logLevel(env.SVC_LOG_LEVEL),
    rates: {
      public_low: parseRate(env.SVC_RATE_PUBLIC_LOW, DEFAULT_RATES.public_low, 'SVC_RATE_PUBLIC_LOW'),
      paid_execution: parseRate(env.SVC_RATE_PAID_EXECUTION, DEFAULT_RATES.paid_execution, 'SVC_RATE_PAID_EXECUTION'),
    },
    trustProxyHops: env.SVC_TRUST_PROXY === 'true' ? 1 : int(env, 'SVC_TRUST_PROXY', 0, 0, 16),
    trustedProxies: (env.SVC_TRUSTED_PROXIES || '127.0.0.1,::1').split(',').map((x) => x.trim()).filter(Boolean),
    sandboxMaxPerClient: int(env, 'SVC_SANDBOX_MAX_PER_CLIENT', 500, 1, 1_000_000),
    gatewayProcesses: gatewayProcesses(env),
    idempotencyTtlMs: int(env, 'SVC_IDEMPOTENCY_TTL_MS', 24 * 3_600_000, 1000, 30 * 86_400_000),
    ...resourceLimits(env),
    ...metrics(env),
  };
}

/** The metrics listener: off unless SVC_METRICS_PORT is set (0 picks a port); loopback unless SVC_METRICS_HOST. */
function metrics(env: NodeJS.ProcessEnv): { metricsHost: string; metricsPort: number | null } {
  const raw = env.SVC_METRICS_PORT;
  const metricsPort = raw === undefined || raw === '' ? null : int(env, 'SVC_METRICS_PORT', 0, 0, 65535);
  if (metricsPort && metricsPort === int(env, 'SVC_HTTP_PORT', 8080, 0, 65535)) {
    throw new Error('SVC_METRICS_PORT must differ from SVC_HTTP_PORT: metrics are never served on the public port');
  }
  return { metricsHost: env.SVC_METRICS_HOST || '127.0.0.1', metricsPort };
}

const MiB = 1 << 20;

/** The cluster's TLS files: all three settings, or none. */
function clusterTlsFiles(env: NodeJS.ProcessEnv): ClusterTlsFiles | null {
  const names = ['SVC_CLUSTER_CA', 'SVC_CLUSTER_CERT', 'SVC_CLUSTER_KEY'] as const;
  const set = names.filter((n) => env[n]);
  if (set.length === 0) return null;
  if (set.length < names.length) throw new Error(`${names.join(', ')} must be set together (got ${set.join(', ')})`);
  const [ca, cert, key] = names.map((n) => resolve(env[n]!)) as [string, string, string];
  return { ca, cert, key };
}

/** SVC_PAYMENTS: unset, empty or `live` → live; `local` → local; anything else is refused by name. */
function paymentsMode(v: string | undefined): 'live' | 'local' {
  if (v === undefined || v === '' || v === 'live') return 'live';
  if (v === 'local') return 'local';
  throw new Error(`SVC_PAYMENTS must be live or local (got ${JSON.stringify(v)})`);
}

/** SVC_STORE: unset, empty or `leveldb` → null; a postgres:// URL as given (never echoed: it may hold a password). */
function storeUrl(v: string | undefined): string | null {
  if (v === undefined || v === '' || v === 'leveldb') return null;
  if (!/^postgres(ql)?:\/\//.test(v)) throw new Error('SVC_STORE must be leveldb or a postgres:// URL');
  return v;
}

const FINALITIES: Record<'evm' | 'tron', readonly Finality[]> = {
  evm: EVM_FINALITIES,
  // TRON's JSON-RPC knows `finalized` (its latest solidified block) and `latest`, not `safe`
  tron: ['finalized', 'latest'],
};

/** SVC_WATCH_<RAIL>_RPC turns a rail's watcher on; its other variables are then checked (docs/settlement.md). */
function watchers(env: NodeJS.ProcessEnv, rails: Rail[]): WatcherConfig[] {
  const out: WatcherConfig[] = [];
  for (const r of rails) {
    const p = `SVC_WATCH_${r.rail}_`;
    const rpc = env[`${p}RPC`];
    if (!rpc) continue;
    let url: URL;
    try { url = new URL(rpc); } catch { throw new Error(`${p}RPC must be an http(s) URL`); }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`${p}RPC must be an http(s) URL`);
    const pollMs = int(env, `${p}POLL_MS`, 5000, 50, 3_600_000);
    const common = {
      rail: r.rail, rpcUrl: rpc, pollMs,
      maxBackoffMs: Math.max(pollMs, int(env, `${p}MAX_BACKOFF_MS`, 60_000, 50, 3_600_000)),
    };
    const family = RAIL_FAMILY[r.rail];
    out.push(family === 'solana' ? solanaWatcher(env, r, p, common) : evmWatcher(env, r, p, family, common));
  }
  return out;
}

function evmWatcher(
  env: NodeJS.ProcessEnv, r: Rail, p: string, family: 'evm' | 'tron', common: WatchCommon,
): EvmWatcherConfig {
  const addr = (name: string, v: string, what: string): string => {
    if (family === 'evm') {
      if (!EVM_ADDRESS.test(v)) throw new Error(`${name} must be ${what}, 0x and 40 hex digits`);
      return v.toLowerCase();
    }
    if (!isTronAddress(v)) throw new Error(`${name} must be ${what}, a TRON address (T…, base58check)`);
    return tronToHex(v);
  };
  const token = addr(`${p}TOKEN`, env[`${p}TOKEN`] ?? '', 'the token contract');
  const address = addr(`SVC_WALLET_${r.rail}`, r.address, `the receiving address when ${p}RPC is set`);
  const finality = (env[`${p}FINALITY`] || 'finalized') as Finality;
  if (!FINALITIES[family].includes(finality)) {
    throw new Error(`${p}FINALITY must be one of ${FINALITIES[family].join(', ')}`);
  }
  const confirmations = int(env, `${p}CONFIRMATIONS`, 0, 0, 100_000);
  if (finality === 'latest' && confirmations < 1) {
    throw new Error(`${p}FINALITY=latest needs ${p}CONFIRMATIONS >= 1 (the newest block may still be replaced)`);
  }
  const from = env[`${p}FROM_BLOCK`];
  return {
    ...common, family, token, address, finality, confirmations,
    fromBlock: from === undefined || from === '' ? null : int(env, `${p}FROM_BLOCK`, 0, 0, Number.MAX_SAFE_INTEGER),
    maxRange: int(env, `${p}MAX_RANGE`, 500, 1, 1_000_000),
    reorgWindow: int(env, `${p}REORG_WINDOW`, 64, 0, 100_000),
  };
}

function solanaWatcher(env: NodeJS.ProcessEnv, r: Rail, p: string, common: WatchCommon): SolanaWatcherConfig {
  const mint = env[`${p}MINT`] ?? '';
  if (!isSolanaAddress(mint)) throw new Error(`${p}MINT must be the token mint, a base58 Solana address`);
  if (!isSolanaAddress(r.address)) {
    throw new Error(`SVC_WALLET_${r.rail} must be a base58 Solana address when ${p}RPC is set`);
  }
  const listed = env[`${p}TOKEN_ACCOUNTS`];
  const tokenAccounts = listed ? listed.split(',').map((x) => x.trim()).filter(Boolean) : null;
  for (const a of tokenAccounts ?? []) {
    if (!isSolanaAddress(a)) throw new Error(`${p}TOKEN_ACCOUNTS must be base58 Solana addresses (got ${a})`);
  }
  const from = env[`${p}FROM_SLOT`];
  return {
    ...common, family: 'solana', mint, owner: r.address, tokenAccounts,
    fromSlot: from === undefined || from === '' ? null : int(env, `${p}FROM_SLOT`, 0, 0, Number.MAX_SAFE_INTEGER),
    pageSize: int(env, `${p}PAGE_SIZE`, 1000, 1, 1000),
  };
}

/**
 * SVC_GATEWAY_PROCESSES: a count, or `auto` (the default): AUTO_GATEWAYS(cores). Measured in
 * `npm run bench:service` (docs/performance.md "Gateway processes").
 */
function gatewayProcesses(env: NodeJS.ProcessEnv): number {
  const v = env.SVC_GATEWAY_PROCESSES;
  if (v === undefined || v === '' || v === 'auto') return autoGateways(availableParallelism());
  const n = /^[0-9]{1,2}$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < 0 || n > 64) {
    throw new Error(`SVC_GATEWAY_PROCESSES must be auto or an integer in 0..64 (got ${JSON.stringify(v)})`);
  }
  return n;
}

/**
 * `auto`: one process on one core; two gateway workers on two cores (measured since the workers answer
 * free quotes themselves: free quotes 1.3–1.8x the one process at c = 8 and 32, paid flows within ±7%,
 * ahead at c = 32; docs/performance.md); beyond, one gateway per core but one (at most 16).
 */
export function autoGateways(cores: number): number {
  if (cores <= 1) return 0;
  return cores === 2 ? 2 : Math.min(cores - 1, 16);
}

function resourceLimits(env: NodeJS.ProcessEnv) {
  const httpRequestTimeoutMs = int(env, 'SVC_HTTP_REQUEST_TIMEOUT_MS', 30_000, 100, 600_000);
  // Node refuses a headers timeout longer than the request timeout
  const headersDefault = Math.min(10_000, httpRequestTimeoutMs);
  const httpHeadersTimeoutMs = int(env, 'SVC_HTTP_HEADERS_TIMEOUT_MS', headersDefault, 100, httpRequestTimeoutMs);
  // at least one whole line (body), or a legal 1 MiB one could never be read
  const lineBudgetBytes = int(env, 'SVC_LINE_BUDGET_BYTES', 16 * MiB, MiB, 2 ** 40);
  const bodyBudgetBytes = int(env, 'SVC_BODY_BUDGET_BYTES', 16 * MiB, MiB, 2 ** 40);
  return {
    handshakeTimeoutMs: int(env, 'SVC_HANDSHAKE_TIMEOUT_MS', 10_000, 100, 600_000),
    edgeMaxConnections: int(env, 'SVC_EDGE_MAX_CONNECTIONS', 1024, 1, 1_000_000),
    edgeMaxConnectionsPerAddress: int(env, 'SVC_EDGE_MAX_CONNECTIONS_PER_ADDRESS', 16, 1, 1_000_000),
    backendMaxConnections: int(env, 'SVC_BACKEND_MAX_CONNECTIONS', 64, 1, 1_000_000),
    adminMaxConnections: int(env, 'SVC_ADMIN_MAX_CONNECTIONS', 16, 1, 1_000_000),
    connectionQueueMs: int(env, 'SVC_CONNECTION_QUEUE_MS', 5_000, 0, 600_000),
    drainTimeoutMs: int(env, 'SVC_DRAIN_TIMEOUT_MS', 10_000, 100, 3_600_000),
    coreReplyTimeoutMs: int(env, 'SVC_CORE_REPLY_TIMEOUT_MS', 10_000, 100, 600_000),
    coreProbeMs: int(env, 'SVC_CORE_PROBE_MS', 2000, 0, 600_000),
    lineBudgetBytes,
    lineBudgetPerAddressBytes:
      int(env, 'SVC_LINE_BUDGET_PER_ADDRESS_BYTES', defaultShare(lineBudgetBytes), MiB, lineBudgetBytes),
    httpHeadersTimeoutMs,
    httpRequestTimeoutMs,
    httpKeepAliveTimeoutMs: int(env, 'SVC_HTTP_KEEP_ALIVE_TIMEOUT_MS', 5_000, 100, 600_000),
    httpMaxConnections: int(env, 'SVC_HTTP_MAX_CONNECTIONS', 1024, 1, 1_000_000),
    httpMaxConnectionsPerAddress: int(env, 'SVC_HTTP_MAX_CONNECTIONS_PER_ADDRESS', 64, 0, 1_000_000),
    bodyBudgetBytes,
    bodyBudgetPerAddressBytes:
      int(env, 'SVC_BODY_BUDGET_PER_ADDRESS_BYTES', defaultShare(bodyBudgetBytes), MiB, bodyBudgetBytes),
  };
}
