// last_error names the cause an on-call engineer acts on, from viem's own error classes (what the EVM
// watcher's client throws) and a fetch failure's system error, and never the RPC URL or its key.
import test from 'ava';
import { HttpRequestError, RpcRequestError, TimeoutError } from 'viem';
import { publicError } from '../../src/core/watchers/poll-loop.ts';

const RPC = 'https://rpc.example/v2/SECRET-KEY';

test('publicError: HTTP status, JSON-RPC code, timeout and system errors are named; the URL never', (t) => {
  const http = new HttpRequestError({ url: RPC, status: 503, body: { id: 1 }, details: 'Service Unavailable' });
  t.regex(publicError(http, RPC), /^HTTP request failed\. \(HTTP 503\)$/);
  const rpc = new RpcRequestError({ url: RPC, body: {}, error: { code: -32005, message: 'limit exceeded' } });
  t.regex(publicError(rpc, RPC), /\(RPC error -32005\)$/);
  const slow = new TimeoutError({ url: RPC, body: {} });
  t.regex(publicError(slow, RPC), /\(timeout\)$/);
  const refused = new HttpRequestError({
    url: RPC, cause: Object.assign(new TypeError('fetch failed'), {
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8545'), { code: 'ECONNREFUSED' }),
    }),
  });
  t.regex(publicError(refused, RPC), /\(ECONNREFUSED\)$/);
  for (const e of [http, rpc, slow, refused]) {
    t.false(publicError(e, RPC).includes('SECRET-KEY'));
    t.false(publicError(e, RPC).includes('rpc.example'));
  }
  t.is(publicError(new Error('plain'), RPC), 'plain');
});
