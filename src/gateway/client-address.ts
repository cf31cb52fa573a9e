// Who the HTTP client is, for rate limits and quotas. The socket's peer, unless svcd was told it sits
// behind N proxies of its own (SVC_TRUST_PROXY=N) and the peer is one of them (SVC_TRUSTED_PROXIES):
// then the N-th X-Forwarded-For entry from the right — the address our outermost proxy saw. The
// leftmost entries are whatever the client wrote, so they are never believed.
import { BlockList, isIP } from 'node:net';

export interface ProxyTrust { hops: number; proxies: string[] }

const unmap = (a: string) => (a.toLowerCase().startsWith('::ffff:') && a.includes('.') ? a.slice(7) : a);

export function trustedProxyList(entries: string[]): BlockList {
  const list = new BlockList();
  for (const raw of entries) {
    const [addr, bits] = raw.split('/') as [string, string | undefined];
    const family = isIP(addr);
    if (!family) throw new Error(`SVC_TRUSTED_PROXIES: ${raw} is not an IP address or CIDR`);
    const type = family === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) {
      list.addAddress(addr, type);
      continue;
    }
    const prefix = Number(bits);
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 6 ? 128 : 32)) {
      throw new Error(`SVC_TRUSTED_PROXIES: bad prefix in ${raw}`);
    }
    list.addSubnet(addr, prefix, type);
  }
  return list;
}

/** Whether a peer address is one of the listed proxies. */
export function proxyMatcher(entries: string[]): (peer: string) => boolean {
  const proxies = trustedProxyList(entries);
  return (peer) => {
    const a = unmap(peer);
    const family = isIP(a);
    return family !== 0 && proxies.check(a, family === 6 ? 'ipv6' : 'ipv4');
  };
}

/** Returns a function from (peer address, X-Forwarded-For header) to the client address. */
export function clientAddressResolver(trust: ProxyTrust): (peer: string | undefined, xff: string) => string {
  const isProxy = proxyMatcher(trust.proxies);
  return (peer, xff) => {
    const p = unmap(peer ?? '');
    if (trust.hops === 0 || !xff || !isProxy(p)) return p || 'unknown';
    const entries = xff.split(',').map((x) => unmap(x.trim())).filter(Boolean);
    const chosen = entries[entries.length - trust.hops];
    return chosen && isIP(chosen) ? chosen : p;
  };
}
