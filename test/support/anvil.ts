// Test harness for the chain watchers: a real local EVM node (anvil, from the @foundry-rs/anvil npm
// package) on an ephemeral port, the 6-decimal test token deployed on it (test/watchers/fixtures, or
// the USDC port with EIP-3009 transferWithAuthorization from test/x402/fixtures),
// viem clients to pay and mine, and an RPC proxy the tests put between svcd and anvil to take the RPC
// down or to act at the exact request a watcher makes between seeing a log and crediting it.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import {
  createPublicClient, createTestClient, createWalletClient, http, type Abi, type Address, type Hash,
  type PublicClient, type TestClient, type WalletClient,
} from 'viem';
import { mnemonicToAccount, type HDAccount } from 'viem/accounts';

const require = createRequire(import.meta.url);

/** A compiled contract as test/support/solc-compile.mjs writes it (test/watchers/fixtures, test/x402/fixtures). */
export interface Fixture { abi: Abi; bytecode: `0x${string}` }

export function readFixture(url: URL): Fixture {
  return JSON.parse(readFileSync(url, 'utf8')) as Fixture;
}

const FIXTURE = readFixture(new URL('../watchers/fixtures/test-usdc.json', import.meta.url));
/** The USDC port with EIP-3009 (test/x402/fixtures); its ERC-20 part has the same ABI as FIXTURE's. */
const TOKEN_3009_URL = new URL('../x402/fixtures/test-usdc-3009.json', import.meta.url);
/** anvil's well-known development mnemonic: its accounts are funded with ether at genesis */
const MNEMONIC = 'test test test test test test test test test test test junk';
export const BASE_CHAIN_ID = 8453;

/** The anvil binary shipped by the platform package that @foundry-rs/anvil depends on. */
export function anvilBinary(): string {
  const pkg = `@foundry-rs/anvil-${process.platform}-${process.arch === 'x64' ? 'amd64' : process.arch}`;
  return join(dirname(require.resolve(`${pkg}/package.json`)), 'bin', 'anvil');
}

export class Anvil {
  readonly url: string;
  readonly proc: ChildProcess;
  readonly public: PublicClient;
  readonly test: TestClient;
  token: Address = '0x';

  private constructor(url: string, proc: ChildProcess) {
    this.url = url;
    this.proc = proc;
    this.public = createPublicClient({ transport: http(url), cacheTime: 0 });
    this.test = createTestClient({ mode: 'anvil', transport: http(url) });
  }

  /** Starts anvil (chain id 8453, like Base; mining on each transaction) and waits for its port. */
  static async start(): Promise<Anvil> {
    const args = ['--port', '0', '--host', '127.0.0.1', '--chain-id', String(BASE_CHAIN_ID), '--accounts', '10'];
    const proc = spawn(anvilBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      const fail = () => { proc.kill('SIGKILL'); reject(new Error(`anvil not listening: ${out}`)); };
      const timer = setTimeout(fail, 60_000);
      proc.stdout!.on('data', (d) => {
        out += d;
        const m = /Listening on (127\.0\.0\.1:\d+)/.exec(out);
        if (m) { clearTimeout(timer); resolve(`http://${m[1]}`); }
      });
      proc.stderr!.on('data', (d) => { out += d; });
      proc.once('exit', (code) => { clearTimeout(timer); reject(new Error(`anvil exited ${code}: ${out}`)); });
    });
    proc.stdout!.resume();
    return new Anvil(url, proc);
  }

  account(i: number): HDAccount {
    return mnemonicToAccount(MNEMONIC, { addressIndex: i });
  }

  wallet(i: number): WalletClient {
    return createWalletClient({ account: this.account(i), transport: http(this.url) });
  }

  /** Deploys `fixture` from account `from`; returns its address. */
  async deploy(fixture: Fixture, args: readonly unknown[] = [], from = 0): Promise<Address> {
    const hash = await this.wallet(from).deployContract({
      abi: fixture.abi, bytecode: fixture.bytecode, args, account: this.account(from), chain: null,
    });
    const r = await this.public.waitForTransactionReceipt({ hash });
    if (r.status !== 'success' || !r.contractAddress) throw new Error(`deployment failed: ${hash}`);
    return r.contractAddress;
  }

  /** Deploys the test token with the whole supply at account 0; returns its address. */
  async deployToken(supply = 10n ** 15n): Promise<Address> {
    this.token = await this.deploy(FIXTURE, [supply]);
    return this.token;
  }

  /**
   * Deploys the USDC port with EIP-3009 instead, the whole supply at account 0; transfer() and
   * balanceOf() then act on it.
   */
  async deployToken3009(supply = 10n ** 15n): Promise<Address> {
    this.token = await this.deploy(readFixture(TOKEN_3009_URL), [supply]);
    return this.token;
  }

  /** A token transfer from account `from` (mined at once: anvil mines each transaction). */
  async transfer(from: number, to: Address, amount: bigint): Promise<{ hash: Hash; block: number; logIndex: number }> {
    const hash = await this.wallet(from).writeContract({
      address: this.token, abi: FIXTURE.abi, functionName: 'transfer', args: [to, amount],
      account: this.account(from), chain: null,
    });
    const r = await this.public.waitForTransactionReceipt({ hash });
    if (r.status !== 'success') throw new Error(`transfer reverted: ${hash}`);
    return { hash, block: Number(r.blockNumber), logIndex: r.logs[0]!.logIndex };
  }

  async balanceOf(who: Address): Promise<bigint> {
    return await this.public.readContract({
      address: this.token, abi: FIXTURE.abi, functionName: 'balanceOf', args: [who],
    }) as bigint;
  }

  async blockNumber(): Promise<number> {
    return Number(await this.public.getBlockNumber({ cacheTime: 0 }));
  }

  async mine(blocks: number): Promise<void> {
    await this.test.mine({ blocks });
  }

  snapshot(): Promise<`0x${string}`> { return this.test.snapshot(); }
  revert(id: `0x${string}`): Promise<void> { return this.test.revert({ id }); }

  stop(): void {
    if (this.proc.exitCode === null) this.proc.kill('SIGKILL');
  }
}

/** One JSON-RPC call as the proxy saw it. */
export interface RpcCall { method: string; params: unknown[] }

/**
 * An HTTP JSON-RPC proxy in front of anvil. `down`: every request gets 503. `onCall`: runs on each
 * call before it is forwarded; returning 'drop' destroys the connection without an answer.
 */
export class RpcProxy {
  readonly server: Server;
  url = '';
  down = false;
  onCall: ((c: RpcCall) => 'drop' | void) | null = null;
  calls = 0;

  private constructor(private readonly target: string) {
    this.server = createServer((req, res) => this.#handle(req, res));
  }

  static async start(target: string): Promise<RpcProxy> {
    const p = new RpcProxy(target);
    await new Promise<void>((r) => p.server.listen(0, '127.0.0.1', () => r()));
    const a = p.server.address() as { port: number };
    p.url = `http://127.0.0.1:${a.port}`;
    return p;
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.calls++;
      if (this.down) {
        res.writeHead(503, { 'content-type': 'text/plain' }).end('upstream unavailable');
        return;
      }
      const body = Buffer.concat(chunks);
      const parsed = JSON.parse(body.toString('utf8')) as RpcCall | RpcCall[];
      for (const c of Array.isArray(parsed) ? parsed : [parsed]) {
        if (this.onCall?.({ method: c.method, params: c.params ?? [] }) === 'drop') {
          req.socket.destroy();
          return;
        }
      }
      const up = request(this.target, { method: 'POST', headers: { 'content-type': 'application/json' } }, (r) => {
        res.writeHead(r.statusCode ?? 502, { 'content-type': 'application/json' });
        r.pipe(res);
      });
      up.on('error', () => res.writeHead(502).end());
      up.end(body);
    });
  }

  close(): Promise<void> {
    return new Promise((r) => { this.server.closeAllConnections(); this.server.close(() => r()); });
  }
}
