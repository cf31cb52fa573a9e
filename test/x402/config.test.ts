// SVC_X402_* (src/core/x402/config.ts): off unless asked; on, every setting checked at start, a bad one named,
// and each network's chain, token and wallet taken from its rail's settings (USDC on Base, USDC on Solana) when
// not given.
import test from 'ava';
import { KNOWN_USDC, SOLANA_MAINNET, x402Config } from '../../src/core/x402/config.ts';

const WALLET = '0x000000000000000000000000000000000000bEEF';
const SOL_WALLET = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const base = { SVC_X402: 'on', SVC_X402_RPC: 'http://127.0.0.1:8545', SVC_X402_PAY_TO: WALLET,
  SVC_X402_RELAYER_KEY_FILE: '/run/svc/relayer.key' };
const solana = { SVC_X402: 'on', SVC_X402_NETWORK: SOLANA_MAINNET, SVC_X402_SOLANA_RPC: 'http://127.0.0.1:8899',
  SVC_X402_SOLANA_PAY_TO: SOL_WALLET, SVC_X402_SOLANA_FEE_PAYER_KEY_FILE: '/run/svc/fee-payer.json' };

test('x402 config: off by default; on, the defaults and the USDC on Base rail\'s settings', (t) => {
  t.is(x402Config({}), null);
  t.is(x402Config({ SVC_X402: 'off' }), null);
  const on = x402Config(base)!;
  t.like(on, { maxTimeoutS: 120, pollMs: 500, solana: null });
  t.like(on.evm, {
    network: 'eip155:8453', chainId: 8453, asset: KNOWN_USDC['eip155:8453'], payTo: WALLET.toLowerCase(),
    finality: 'latest', confirmations: 0, tokenName: null, tokenVersion: null,
  });
  const fromRail = x402Config({
    SVC_X402: 'on', SVC_X402_RELAYER_KEY_FILE: '/k', SVC_WATCH_USDC_BASE_RPC: 'https://rpc.example/key',
    SVC_WATCH_USDC_BASE_TOKEN: '0x00000000000000000000000000000000000000AA', SVC_WALLET_USDC_BASE: WALLET,
  });
  t.like(fromRail?.evm, { rpcUrl: 'https://rpc.example/key', asset: '0x00000000000000000000000000000000000000aa' });
  const sepolia = x402Config({ ...base, SVC_X402_NETWORK: 'eip155:84532' });
  t.like(sepolia?.evm, { chainId: 84532, asset: KNOWN_USDC['eip155:84532'] });
});

test('x402 config: Solana alone, or beside an EVM network; its defaults and the USDC on Solana rail\'s settings',
  (t) => {
  const alone = x402Config(solana)!;
  t.is(alone.evm, null);
  t.like(alone.solana, {
    family: 'solana', network: SOLANA_MAINNET, asset: KNOWN_USDC[SOLANA_MAINNET], payTo: SOL_WALLET,
    commitment: 'confirmed', maxComputeUnits: 40_000, maxPriorityFeeMicroLamports: 100_000,
    feePayerKeyFile: '/run/svc/fee-payer.json',
  });
  const both = x402Config({ ...base, ...solana, SVC_X402_NETWORK: `eip155:8453, ${SOLANA_MAINNET}` })!;
  t.is(both.evm?.network, 'eip155:8453');
  t.is(both.solana?.network, SOLANA_MAINNET);
  const fromRail = x402Config({
    SVC_X402: 'on', SVC_X402_NETWORK: SOLANA_MAINNET, SVC_X402_SOLANA_FEE_PAYER_KEY_FILE: '/k.json',
    SVC_WATCH_USDC_SOLANA_RPC: 'https://sol.example/key', SVC_WATCH_USDC_SOLANA_MINT: SOL_WALLET,
    SVC_WALLET_USDC_SOLANA: SOL_WALLET, SVC_X402_SOLANA_COMMITMENT: 'finalized',
  });
  t.like(fromRail?.solana, { rpcUrl: 'https://sol.example/key', asset: SOL_WALLET, commitment: 'finalized' });
});

test('x402 config: a bad or missing setting stops svcd naming its variable', (t) => {
  const bad: [Record<string, string>, RegExp][] = [
    [{ SVC_X402: 'yes' }, /SVC_X402 must be on or off/],
    [{ ...base, SVC_X402_RELAYER_KEY_FILE: '' }, /SVC_X402_RELAYER_KEY_FILE/],
    [{ ...base, SVC_X402_RPC: 'ftp://x' }, /SVC_X402_RPC must be an http\(s\) URL/],
    [{ ...base, SVC_X402_NETWORK: 'base' }, /SVC_X402_NETWORK must list eip155:<chain id> and\/or solana:/],
    [{ ...base, SVC_X402_NETWORK: 'eip155:8453,eip155:1' }, /SVC_X402_NETWORK lists two EVM networks/],
    [{ ...base, SVC_X402_NETWORK: 'eip155:1' }, /SVC_X402_ASSET must be the token contract \(no USDC address is known/],
    [{ ...base, SVC_X402_PAY_TO: 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb' }, /SVC_X402_PAY_TO must be/],
    [{ ...base, SVC_X402_FINALITY: 'final' }, /SVC_X402_FINALITY must be one of finalized, safe, latest/],
    [{ ...base, SVC_X402_CONFIRMATIONS: '1e3' }, /SVC_X402_CONFIRMATIONS must be an integer in 0\.\.10000/],
    [{ ...base, SVC_X402_MAX_TIMEOUT_S: '5' }, /SVC_X402_MAX_TIMEOUT_S must be an integer in 10\.\.3600/],
    [{ ...base, SVC_X402_TOKEN_NAME: 'USD Coin' }, /SVC_X402_TOKEN_NAME and SVC_X402_TOKEN_VERSION must be set /],
    [{ ...solana, SVC_X402_SOLANA_FEE_PAYER_KEY_FILE: '' }, /needs SVC_X402_SOLANA_FEE_PAYER_KEY_FILE/],
    [{ ...solana, SVC_X402_SOLANA_RPC: '' }, /needs SVC_X402_SOLANA_RPC/],
    [{ ...solana, SVC_X402_SOLANA_PAY_TO: WALLET }, /SVC_X402_SOLANA_PAY_TO must be .*base58 Solana address/],
    [{ ...solana, SVC_X402_NETWORK: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa9' },
      /SVC_X402_SOLANA_ASSET must be the token's mint \(no USDC mint is known/],
    [{ ...solana, SVC_X402_SOLANA_COMMITMENT: 'final' }, /SVC_X402_SOLANA_COMMITMENT must be one of processed, conf/],
    [{ ...solana, SVC_X402_SOLANA_MAX_COMPUTE_UNITS: '2000000' }, /SVC_X402_SOLANA_MAX_COMPUTE_UNITS must be an/],
  ];
  for (const [env, message] of bad) t.throws(() => x402Config(env), { message }, JSON.stringify(env));
});
