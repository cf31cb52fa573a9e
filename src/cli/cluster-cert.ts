// `svcd cluster-cert --ca DIR NAME [HOST ...]`: the certificates of a cluster's mutual TLS
// (docs/scale-out.md "Across hosts"). The first use creates the cluster CA in DIR (ca-cert.pem, and
// ca-key.pem, mode 0600, which signs members and never leaves that machine); each use issues one
// member's certificate, NAME-cert.pem and NAME-key.pem in DIR, for the hosts it is reached at (its
// backend's address or DNS name; 127.0.0.1 and localhost are always in, for the gateway workers of its
// own `svcd start`). ECDSA P-256; a member's certificate serves as server and as client.
import { webcrypto } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EC_P256, altName, newKeyPair, pkcs8Pem, randomSerial, x509 } from '../protocol/x509-parts.ts';

const DAY = 86_400_000;
/** The CA lives ten years; a member's certificate 397 days (renew it before: docs, "Rotation"). */
const CA_DAYS = 3650;
const MEMBER_DAYS = 397;

export const CLUSTER_CERT_USAGE = 'usage: svcd cluster-cert --ca DIR NAME [HOST ...]\n'
  + '  creates the cluster CA in DIR on first use (ca-cert.pem, ca-key.pem), then issues NAME-cert.pem and\n'
  + '  NAME-key.pem there for a member reached at HOST (addresses or DNS names; 127.0.0.1 and localhost are\n'
  + '  always in). NAME: letters, digits, . _ -';

async function importKey(pem: string): Promise<CryptoKey> {
  const der = Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
  return webcrypto.subtle.importKey('pkcs8', der, EC_P256, false, ['sign']);
}

/** The CA in `dir`: loaded, or created (and said so) on first use. */
async function clusterCa(dir: string): Promise<{ cert: x509.X509Certificate; key: CryptoKey; created: boolean }> {
  const certPath = join(dir, 'ca-cert.pem'), keyPath = join(dir, 'ca-key.pem');
  if (existsSync(certPath) && existsSync(keyPath)) {
    return {
      cert: new x509.X509Certificate(readFileSync(certPath, 'utf8')),
      key: await importKey(readFileSync(keyPath, 'utf8')), created: false,
    };
  }
  if (existsSync(certPath) || existsSync(keyPath)) {
    throw new Error(`${dir} holds half a CA (ca-cert.pem or ca-key.pem)`);
  }
  const keys = await newKeyPair();
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(), name: 'CN=svc cluster CA', keys, signingAlgorithm: EC_P256,
    notBefore: new Date(now - 3_600_000), notAfter: new Date(now + CA_DAYS * DAY),
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  writeFileSync(keyPath, await pkcs8Pem(keys.privateKey), { mode: 0o600 });
  writeFileSync(certPath, cert.toString('pem') + '\n', { mode: 0o644 });
  return { cert, key: keys.privateKey, created: true };
}

/** Issues NAME's certificate; returns the lines to print. */
export async function clusterCert(caDir: string, name: string, hosts: string[]): Promise<string[]> {
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(name)) throw new Error(`NAME ${JSON.stringify(name)}: letters, digits, . _ -`);
  const dir = resolve(caDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const ca = await clusterCa(dir);
  const keys = await newKeyPair();
  const names = [...new Set(['localhost', '127.0.0.1', ...hosts])];
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(), subject: `CN=${name}`, issuer: ca.cert.subject,
    notBefore: new Date(now - 3_600_000), notAfter: new Date(now + MEMBER_DAYS * DAY),
    signingKey: ca.key, publicKey: keys.publicKey, signingAlgorithm: EC_P256,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
      new x509.SubjectAlternativeNameExtension(names.map(altName)),
      await x509.AuthorityKeyIdentifierExtension.create(ca.cert),
    ],
  });
  const certPath = join(dir, `${name}-cert.pem`), keyPath = join(dir, `${name}-key.pem`);
  writeFileSync(keyPath, await pkcs8Pem(keys.privateKey), { mode: 0o600 });
  writeFileSync(certPath, cert.toString('pem') + '\n', { mode: 0o644 });
  return [
    ...(ca.created ? [`created the cluster CA: ${join(dir, 'ca-cert.pem')} (its key ca-key.pem stays here)`] : []),
    `issued ${name} for ${names.join(', ')}, valid until ${cert.notAfter.toISOString()}:`,
    `  SVC_CLUSTER_CA=${join(dir, 'ca-cert.pem')}`,
    `  SVC_CLUSTER_CERT=${certPath}`,
    `  SVC_CLUSTER_KEY=${keyPath}`,
  ];
}

/** The subcommand: 0 done, 2 usage. */
export async function clusterCertCommand(args: string[]): Promise<number> {
  const at = args.indexOf('--ca');
  const caDir = at >= 0 ? args[at + 1] : undefined;
  const rest = args.filter((_, i) => at < 0 || (i !== at && i !== at + 1));
  if (!caDir || rest.length < 1 || rest.some((a) => a.startsWith('-'))) {
    console.error(CLUSTER_CERT_USAGE);
    return 2;
  }
  const [name, ...hosts] = rest as [string, ...string[]];
  console.log((await clusterCert(caDir, name, hosts)).join('\n'));
  return 0;
}
