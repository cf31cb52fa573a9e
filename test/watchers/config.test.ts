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
    [{ SVC_WATCH_USDT_TRON_RPC: 'https://tron.example' }, /SVC_WATCH_USDT_TRON_RPC: no watcher for USDT_TRON yet/],
  ];
  for (const [over, msg] of bad) {
    t.throws(() => loadConfig({ ...base, ...over }), { message: msg }, JSON.stringify(over));
  }
});
