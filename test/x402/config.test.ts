// SVC_X402_* (src/core/x402/config.ts): off unless asked; on, every setting checked at start, a bad one named,
// and the chain, token and wallet taken from the USDC on Base rail's settings when not given.
import test from 'ava';
import { KNOWN_USDC, x402Config } from '../../src/core/x402/config.ts';

const WALLET = '0x000000000000000000000000000000000000bEEF';
const base = { SVC_X402: 'on', SVC_X402_RPC: 'http://127.0.0.1:8545', SVC_X402_PAY_TO: WALLET,
  SVC_X402_RELAYER_KEY_FILE: '/run/svc/relayer.key' };

test('x402 config: off by default; on, the defaults and the USDC on Base rail\'s settings', (t) => {
  t.is(x402Config({}), null);
  t.is(x402Config({ SVC_X402: 'off' }), null);
  t.like(x402Config(base), {
    network: 'eip155:8453', chainId: 8453, asset: KNOWN_USDC['eip155:8453'], payTo: WALLET.toLowerCase(),
    finality: 'latest', confirmations: 0, maxTimeoutS: 120, pollMs: 500, tokenName: null, tokenVersion: null,
  });
  const fromRail = x402Config({
    SVC_X402: 'on', SVC_X402_RELAYER_KEY_FILE: '/k', SVC_WATCH_USDC_BASE_RPC: 'https://rpc.example/key',
    SVC_WATCH_USDC_BASE_TOKEN: '0x00000000000000000000000000000000000000AA', SVC_WALLET_USDC_BASE: WALLET,
  });
  t.like(fromRail, { rpcUrl: 'https://rpc.example/key', asset: '0x00000000000000000000000000000000000000aa' });
  const sepolia = x402Config({ ...base, SVC_X402_NETWORK: 'eip155:84532' });
  t.like(sepolia, { chainId: 84532, asset: KNOWN_USDC['eip155:84532'] });
});

test('x402 config: a bad or missing setting stops svcd naming its variable', (t) => {
  const bad: [Record<string, string>, RegExp][] = [
    [{ SVC_X402: 'yes' }, /SVC_X402 must be on or off/],
    [{ ...base, SVC_X402_RELAYER_KEY_FILE: '' }, /SVC_X402_RELAYER_KEY_FILE/],
    [{ ...base, SVC_X402_RPC: 'ftp://x' }, /SVC_X402_RPC must be an http\(s\) URL/],
    [{ ...base, SVC_X402_NETWORK: 'base' }, /SVC_X402_NETWORK must be eip155:<chain id>/],
    [{ ...base, SVC_X402_NETWORK: 'eip155:1' }, /SVC_X402_ASSET must be the token contract \(no USDC address is known/],
    [{ ...base, SVC_X402_PAY_TO: 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb' }, /SVC_X402_PAY_TO must be/],
    [{ ...base, SVC_X402_FINALITY: 'final' }, /SVC_X402_FINALITY must be one of finalized, safe, latest/],
    [{ ...base, SVC_X402_CONFIRMATIONS: '1e3' }, /SVC_X402_CONFIRMATIONS must be an integer in 0\.\.10000/],
    [{ ...base, SVC_X402_MAX_TIMEOUT_S: '5' }, /SVC_X402_MAX_TIMEOUT_S must be an integer in 10\.\.3600/],
    [{ ...base, SVC_X402_TOKEN_NAME: 'USD Coin' }, /SVC_X402_TOKEN_NAME and SVC_X402_TOKEN_VERSION must be set /],
  ];
  for (const [env, message] of bad) t.throws(() => x402Config(env), { message }, JSON.stringify(env));
});
