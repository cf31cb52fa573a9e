// The edge certificate: the operator's files (SVC_TLS_CERT/SVC_TLS_KEY) or, by default, a
// self-signed ECDSA P-256 certificate generated into the data dir on first start (key mode 0600).
// Clients pin it by the SHA-256 of its DER bytes, which HELLO and the manifest publish.
import { X509Certificate, webcrypto } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import 'reflect-metadata'; // @peculiar/x509 needs it (tsyringe)
import * as x509 from '@peculiar/x509';

export interface TlsMaterial { cert: string; key: string; fingerprint256: string; selfSigned: boolean }

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

async function generateSelfSigned(hosts: string[]): Promise<{ cert: string; key: string }> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
  const keys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']) as CryptoKeyPair;
  const extraHosts = hosts.filter((h) => h && h !== '::' && h !== '0.0.0.0');
  const names = [...new Set(['localhost', '127.0.0.1', '::1', ...extraHosts])];
  const altName = (n: string) => (isIP(n) ? { type: 'ip' as const, value: n } : { type: 'dns' as const, value: n });
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(16))).toString('hex').replace(/^[89a-f]/, '1'),
    name: 'CN=svc edge (self-signed)',
    notBefore: new Date(now - 3_600_000),
    notAfter: new Date(now + 825 * 86_400_000),
    keys,
    signingAlgorithm: alg,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
      new x509.SubjectAlternativeNameExtension(names.map(altName)),
    ],
  });
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  const body = Buffer.from(pkcs8).toString('base64').match(/.{1,64}/g)!.join('\n');
  const keyPem = `-----BEGIN PRIVATE KEY-----\n${body}\n-----END PRIVATE KEY-----\n`;
  return { cert: cert.toString('pem') + '\n', key: keyPem };
}

export async function loadTlsMaterial(opts: {
  dataDir: string; certFile: string | null; keyFile: string | null; hosts: string[];
}): Promise<TlsMaterial> {
  let certPath = opts.certFile, keyPath = opts.keyFile, selfSigned = false;
  if (!certPath || !keyPath) {
    certPath = join(opts.dataDir, 'edge-cert.pem');
    keyPath = join(opts.dataDir, 'edge-key.pem');
    selfSigned = true;
    if (!existsSync(certPath) || !existsSync(keyPath)) {
      const gen = await generateSelfSigned(opts.hosts);
      writeFileSync(keyPath, gen.key, { mode: 0o600 });
      writeFileSync(certPath, gen.cert, { mode: 0o644 });
    }
  }
  try {
    const cert = readFileSync(certPath, 'utf8'), key = readFileSync(keyPath, 'utf8');
    const fingerprint256 = new X509Certificate(cert).fingerprint256.replaceAll(':', '').toLowerCase();
    createSecureContext({ cert, key }); // a key that is not the certificate's fails here, not at the first client
    return { cert, key, fingerprint256, selfSigned };
  } catch (e) {
    // OpenSSL's and errno's words alone do not say which setting to fix
    const which = selfSigned ? `the self-signed edge certificate in ${opts.dataDir}` : 'SVC_TLS_CERT / SVC_TLS_KEY';
    throw new Error(`${which} (${certPath}, ${keyPath}): ${(e as Error).message}`, { cause: e });
  }
}
