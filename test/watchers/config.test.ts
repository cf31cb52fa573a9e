// SVC_WATCH_<RAIL>_* parsing: off unless the RPC is set, every other variable checked then, and a bad
// value stops svcd with a message naming the variable (README "Configuration", docs/settlement.md).
import test from 'ava';
import { loadConfig } from '../../src/core/config.ts';

const TOKEN = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const WALLET = '0x000000000000000000000000000000000000bEEF';
const base = {
  SVC_WALLET_USDC_BASE: WALLET, SVC_WATCH_USDC_BASE_RPC: 'https://rpc.example/key', SVC_WATCH_USDC_BASE_TOKEN: TOKEN,
};

test('watch config: none by default; one per rail with an RPC, defaults filled in, addresses lower-cased', (t) => {
  t.deepEqual(loadConfig({}).watchers, []);
  const [w, ...rest] = loadConfig(base).watchers;
  t.deepEqual(rest, []);
  t.like(w, {
    rail: 'USDC_BASE', family: 'evm', token: TOKEN.toLowerCase(), address: WALLET.toLowerCase(), finality: 'finalized',
    confirmations: 0, fromBlock: null, maxRange: 500, reorgWindow: 64, pollMs: 5000,
  });
  const tuned = loadConfig({ ...base, SVC_WATCH_USDC_BASE_FINALITY: 'latest', SVC_WATCH_USDC_BASE_CONFIRMATIONS: '12',
    SVC_WATCH_USDC_BASE_FROM_BLOCK: '123' }).watchers[0];
  t.like(tuned, { finality: 'latest', confirmations: 12, fromBlock: 123 });
});

test('watch config: bad values are refused, naming the variable', (t) => {
  const bad: [Record<string, string>, RegExp][] = [
    [{ SVC_WATCH_USDC_BASE_RPC: 'ftp://x' }, /SVC_WATCH_USDC_BASE_RPC/],
    [{ SVC_WATCH_USDC_BASE_RPC: 'not a url' }, /SVC_WATCH_USDC_BASE_RPC/],
    [{ SVC_WATCH_USDC_BASE_TOKEN: '0x1234' }, /SVC_WATCH_USDC_BASE_TOKEN/],
    [{ SVC_WALLET_USDC_BASE: '<WALLET_ADDRESS>' }, /SVC_WALLET_USDC_BASE/],
    [{ SVC_WATCH_USDC_BASE_FINALITY: 'soon' }, /SVC_WATCH_USDC_BASE_FINALITY/],
    [{ SVC_WATCH_USDC_BASE_FINALITY: 'latest' }, /SVC_WATCH_USDC_BASE_CONFIRMATIONS/],
    [{ SVC_WATCH_USDC_BASE_CONFIRMATIONS: '-1' }, /SVC_WATCH_USDC_BASE_CONFIRMATIONS/],
    [{ SVC_WATCH_USDC_BASE_MAX_RANGE: '0' }, /SVC_WATCH_USDC_BASE_MAX_RANGE/],
    // a TRON rail's addresses are T… (base58check), a Solana rail's base58 keys
    [{ SVC_WATCH_USDT_TRON_RPC: 'https://tron.example' }, /SVC_WATCH_USDT_TRON_TOKEN/],
    [{ SVC_WATCH_USDC_SOLANA_RPC: 'https://sol.example' }, /SVC_WATCH_USDC_SOLANA_MINT/],
  ];
  for (const [over, msg] of bad) {
    t.throws(() => loadConfig({ ...base, ...over }), { message: msg }, JSON.stringify(over));
  }
});

const USDT_TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const TRON_WALLET = 'TBREsCfBdPyD612xZnwvGPux7osbXvtzLh';
const tron = {
  SVC_WALLET_USDT_TRON: TRON_WALLET, SVC_WATCH_USDT_TRON_RPC: 'https://tron.example/jsonrpc',
  SVC_WATCH_USDT_TRON_TOKEN: USDT_TRON,
};

test('watch config: TRON takes T… addresses and works on their hex; finalized (solidified) by default', (t) => {
  const [w] = loadConfig(tron).watchers;
  t.like(w, {
    rail: 'USDT_TRON', family: 'tron', token: '0xa614f803b6fd780986a42c78ec9c7f77e6ded13c',
    address: '0x0fe47f49fd91f0edb7fa2b94a3c45d9c2231709c', finality: 'finalized', confirmations: 0,
  });
  t.like(loadConfig({ ...tron, SVC_WATCH_USDT_TRON_FINALITY: 'latest', SVC_WATCH_USDT_TRON_CONFIRMATIONS: '20' })
    .watchers[0], { finality: 'latest', confirmations: 20 });
  const bad: [Record<string, string>, RegExp][] = [
    [{ SVC_WATCH_USDT_TRON_TOKEN: '0xa614f803b6fd780986a42c78ec9c7f77e6ded13c' }, /SVC_WATCH_USDT_TRON_TOKEN.*T…/],
    [{ SVC_WALLET_USDT_TRON: 'TBREsCfBdPyD612xZnwvGPux7osbXvtzLi' }, /SVC_WALLET_USDT_TRON/],
    // TRON's JSON-RPC has no `safe` tag
    [{ SVC_WATCH_USDT_TRON_FINALITY: 'safe' }, /SVC_WATCH_USDT_TRON_FINALITY must be one of finalized, latest/],
    [{ SVC_WATCH_USDT_TRON_FINALITY: 'latest' }, /SVC_WATCH_USDT_TRON_CONFIRMATIONS/],
  ];
  for (const [over, msg] of bad) {
    t.throws(() => loadConfig({ ...tron, ...over }), { message: msg }, JSON.stringify(over));
  }
});

const USDC_MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const SOL_WALLET = '9fYLFVoVqwH37C3dyPi6cpeobfbQ2jtLpN5HgAYDDdkm';
const sol = {
  SVC_WALLET_USDC_SOLANA: SOL_WALLET, SVC_WATCH_USDC_SOLANA_RPC: 'https://sol.example/key',
  SVC_WATCH_USDC_SOLANA_MINT: USDC_MINT,
};

test('watch config: Solana takes a mint and the wallet; token accounts optional (default: its ATA)', (t) => {
  const [w] = loadConfig(sol).watchers;
  t.like(w, {
    rail: 'USDC_SOLANA', family: 'solana', mint: USDC_MINT, owner: SOL_WALLET, tokenAccounts: null, fromSlot: null,
    pageSize: 1000, pollMs: 5000,
  });
  const two = `${SOL_WALLET}, ${USDC_MINT}`;
  t.deepEqual(loadConfig({ ...sol, SVC_WATCH_USDC_SOLANA_TOKEN_ACCOUNTS: two, SVC_WATCH_USDC_SOLANA_FROM_SLOT: '7' })
    .watchers[0], { ...w!, tokenAccounts: [SOL_WALLET, USDC_MINT], fromSlot: 7 });
  const bad: [Record<string, string>, RegExp][] = [
    [{ SVC_WATCH_USDC_SOLANA_MINT: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' }, /SVC_WATCH_USDC_SOLANA_MINT/],
    // base58 but not 32 bytes, and characters base58 has not (0, O, I, l)
    [{ SVC_WALLET_USDC_SOLANA: SOL_WALLET.slice(0, 20) }, /SVC_WALLET_USDC_SOLANA/],
    [{ SVC_WATCH_USDC_SOLANA_TOKEN_ACCOUNTS: `${SOL_WALLET},0OIl` }, /SVC_WATCH_USDC_SOLANA_TOKEN_ACCOUNTS/],
    [{ SVC_WATCH_USDC_SOLANA_PAGE_SIZE: '1001' }, /SVC_WATCH_USDC_SOLANA_PAGE_SIZE/],
    [{ SVC_WATCH_USDC_SOLANA_RPC: 'wss://sol.example' }, /SVC_WATCH_USDC_SOLANA_RPC/],
  ];
  for (const [over, msg] of bad) {
    t.throws(() => loadConfig({ ...sol, ...over }), { message: msg }, JSON.stringify(over));
  }
});
