// Mutual TLS between the members of one cluster (docs/scale-out.md "Across hosts"): core nodes serve
// their backend listener over TLS 1.3 and ask every peer for a certificate; gateways present theirs.
// Both sides trust the cluster CA (SVC_CLUSTER_CA, a PEM file that may hold several CAs while one is
// rotated out), nothing else: no public CA, no pin. A node then trusts the `via` client address only
// from a peer that proved it holds a key the cluster CA signed. The files are read when loaded (at start
// and on SIGHUP), checked here so that a wrong pair fails the start, not the first call.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';

/** Where the cluster's TLS files are (SVC_CLUSTER_CA, SVC_CLUSTER_CERT, SVC_CLUSTER_KEY). */
export interface ClusterTlsFiles { ca: string; cert: string; key: string }

/** The files' contents, checked: the certificate is the key's, unexpired, and issued by a CA in `ca`. */
export interface ClusterTls {
  ca: string;
  cert: string;
  key: string;
  /** the certificate's subject common name (a member's name: logged, never trusted for anything) */
  name: string;
  /** the certificate's expiry */
  notAfter: Date;
}

const read = (path: string, what: string): string => {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`${what} ${path}: ${(e as Error).message}`);
  }
};

/** Every certificate in a PEM bundle. */
function certificates(pem: string, what: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new Error(`${what}: no PEM certificate in it`);
  return blocks.map((b) => new X509Certificate(b));
}

/** Reads and checks the cluster's TLS files; a problem is an Error naming the file and the setting. */
export function loadClusterTls(files: ClusterTlsFiles, now = new Date()): ClusterTls {
  const ca = read(files.ca, 'SVC_CLUSTER_CA');
  const cert = read(files.cert, 'SVC_CLUSTER_CERT');
  const key = read(files.key, 'SVC_CLUSTER_KEY');
  const cas = certificates(ca, `SVC_CLUSTER_CA ${files.ca}`);
  if (!cas.every((c) => c.ca)) throw new Error(`SVC_CLUSTER_CA ${files.ca}: holds a certificate that is not a CA`);
  const [leaf] = certificates(cert, `SVC_CLUSTER_CERT ${files.cert}`);
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (e) {
    throw new Error(`SVC_CLUSTER_KEY ${files.key}: not a private key (${(e as Error).message})`);
  }
  if (!leaf!.checkPrivateKey(privateKey)) {
    throw new Error(`SVC_CLUSTER_KEY ${files.key} is not the key of SVC_CLUSTER_CERT ${files.cert}`);
  }
  if (!cas.some((c) => leaf!.checkIssued(c) && leaf!.verify(c.publicKey))) {
    throw new Error(`SVC_CLUSTER_CERT ${files.cert} is not issued by a CA in SVC_CLUSTER_CA ${files.ca}`);
  }
  const notAfter = new Date(leaf!.validTo);
  if (notAfter <= now || new Date(leaf!.validFrom) > now) {
    throw new Error(`SVC_CLUSTER_CERT ${files.cert} is not valid now (${leaf!.validFrom} to ${leaf!.validTo})`);
  }
  createSecureContext({ cert, key, ca }); // what OpenSSL refuses fails here too
  const name = /(?:^|\n)CN=([^\n]*)/.exec(leaf!.subject)?.[1] ?? leaf!.subject;
  return { ca, cert, key, name, notAfter };
}

/** The peer's certificate name on an authenticated cluster connection, for logs. */
export function peerName(cert: { subject?: { CN?: string | string[] } } | null | undefined): string {
  const cn = cert?.subject?.CN;
  return (Array.isArray(cn) ? cn[0] : cn) ?? 'unnamed';
}
