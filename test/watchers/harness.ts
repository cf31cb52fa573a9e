// What the watcher tests share: anvil with the test token and funded payers, svcd with the USDC_BASE
// watcher pointed at it (latest minus 3 confirmations: anvil has no real finality), and waits on
// observable state (never on time).
import type { ExecutionContext } from 'ava';
import type { Address } from 'viem';
import { SvcClient } from '../../src/client/client.ts';
import { Anvil } from '../support/anvil.ts';
import { Svcd } from '../support/svcd.ts';

export const CONFIRMATIONS = 3;
/** Payers: accounts 1..4 get tokens; account 9 is the rail's receiving address. */
export const PAYERS = [1, 2, 3, 4];

export interface Chain { anvil: Anvil; token: Address; railAddress: Address; fromBlock: number }

export async function startChain(t: ExecutionContext, timeoutMs = 6 * 60_000): Promise<Chain> {
  // a real node, svcd restarts and mining on a shared 2-core box: more than ava's 3 min of silence
  t.timeout(timeoutMs);
  const anvil = await Anvil.start();
  t.teardown(() => anvil.stop());
  const token = await anvil.deployToken();
  for (const p of PAYERS) await anvil.transfer(0, anvil.account(p).address, 10_000n * 10n ** 6n);
  return { anvil, token, railAddress: anvil.account(9).address, fromBlock: await anvil.blockNumber() };
}

export function watcherEnv(chain: Chain, rpc: string, over: Record<string, string> = {}): Record<string, string> {
  return {
    SVC_WALLET_USDC_BASE: chain.railAddress,
    SVC_WATCH_USDC_BASE_RPC: rpc,
    SVC_WATCH_USDC_BASE_TOKEN: chain.token,
    SVC_WATCH_USDC_BASE_FINALITY: 'latest',
    SVC_WATCH_USDC_BASE_CONFIRMATIONS: String(CONFIRMATIONS),
    SVC_WATCH_USDC_BASE_FROM_BLOCK: String(chain.fromBlock),
    SVC_WATCH_USDC_BASE_POLL_MS: '100',
    SVC_WATCH_USDC_BASE_MAX_BACKOFF_MS: '400',
    SVC_WATCH_USDC_BASE_MAX_RANGE: '4',
    SVC_WATCH_USDC_BASE_REORG_WINDOW: '16',
    ...over,
  };
}

export async function startSvcd(t: ExecutionContext, env: Record<string, string>, args = ['start']): Promise<Svcd> {
  const s = await Svcd.start(env, args);
  t.teardown(async () => { await s.kill9(); s.cleanup(); });
  return s;
}

/** Polls `probe` until it returns a value (not undefined); fails after a generous deadline. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, deadlineMs = 90_000): Promise<T> {
  const end = Date.now() + deadlineMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface Invoice {
  invoice_id: string; machine_id: string; amount_due: string; credit_units: string; state: string;
  pay_to: string; machine_token?: string; settlement_reference?: string; deposit_id?: string;
  settled_late?: boolean; payment_seen?: { tx_id: string; confirmations: number; block_number: number };
  /** Solana rails: the Solana Pay reference and transfer request */
  reference?: string; payment_uri?: string;
}

/** A machine with a USDC/Base invoice (or on `rail`) over the edge (claims the machine). */
export async function openInvoice(
  s: Svcd, machineId: string, units: number, token?: string, rail = { network: 'Base', asset: 'USDC' },
): Promise<Invoice> {
  const c = await s.edge();
  try {
    const args = { machine_id: machineId, units, ...rail };
    return await c.request('FUND_ACCOUNT', args, token ? { token } : undefined) as unknown as Invoice;
  } finally {
    c.close();
  }
}

export async function invoiceStatus(s: Svcd, inv: Invoice, token: string): Promise<Invoice> {
  const c = await s.edge();
  try {
    const args = { invoice_id: inv.invoice_id, machine_id: inv.machine_id };
    return await c.request('INVOICE_STATUS', args, { token }) as unknown as Invoice;
  } finally {
    c.close();
  }
}

export async function balance(s: Svcd, machineId: string, token: string): Promise<bigint> {
  const c = await s.edge();
  try {
    const b = await c.request('BALANCE', { machine_id: machineId }, { token });
    return BigInt(b.available_units as string);
  } finally {
    c.close();
  }
}

/** The watcher's status as HEALTH reports it (the same object /api/v1/status publishes). */
export async function watcherStatus(s: Svcd, rail = 'USDC_BASE'): Promise<Record<string, any>> {
  const c = await s.edge();
  try {
    const h = await c.request('HEALTH', {});
    return (h.watchers as Record<string, Record<string, any>>)[rail]!;
  } finally {
    c.close();
  }
}

/** Waits until the watcher has scanned through `block` (its cursor is there or beyond). */
/**
 * The watcher's status once a pass has finished since svcd started (state no longer `starting`) with
 * its cursor at `block` or beyond: after a restart the cursor read back from the store is already
 * there before any pass ran.
 */
export async function scannedThrough(s: Svcd, block: number, rail?: string): Promise<Record<string, any>> {
  return waitFor(`the watcher's cursor to reach block ${block}`, async () => {
    const st = await watcherStatus(s, rail);
    return st.state !== 'starting' && st.cursor !== null && st.cursor >= block ? st : undefined;
  });
}

export async function waitSettled(s: Svcd, inv: Invoice, token: string): Promise<Invoice> {
  return waitFor(`invoice ${inv.invoice_id} to settle`, async () => {
    const cur = await invoiceStatus(s, inv, token);
    return cur.state === 'settled' ? cur : undefined;
  });
}

export async function admin(s: Svcd, cmd: string, args: Record<string, unknown>): Promise<Record<string, any>> {
  const a: SvcClient = await s.admin();
  try {
    return await a.request(cmd, args);
  } finally {
    a.close();
  }
}

/** The error code a request fails with (or 'ok'). */
export async function codeOf(p: Promise<unknown>): Promise<string> {
  try { await p; return 'ok'; } catch (e) { return String((e as { code?: unknown }).code); }
}
