// The edge certificate: the operator's files (SVC_TLS_CERT/SVC_TLS_KEY) or, by default, a
// self-signed ECDSA P-256 certificate generated into the data dir on first start (key mode 0600).
// Clients pin it by the SHA-256 of its DER bytes, which HELLO and the manifest publish.
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import { EC_P256, altName, newKeyPair, pkcs8Pem, randomSerial, x509 } from '../protocol/x509-parts.ts';

export interface TlsMaterial { cert: string; key: string; fingerprint256: string; selfSigned: boolean }

async function generateSelfSigned(hosts: string[]): Promise<{ cert: string; key: string }> {
  const keys = await newKeyPair();
  const extraHosts = hosts.filter((h) => h && h !== '::' && h !== '0.0.0.0');
  const names = [...new Set(['localhost', '127.0.0.1', '::1', ...extraHosts])];
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: 'CN=svc edge (self-signed)',
    notBefore: new Date(now - 3_600_000),
    notAfter: new Date(now + 825 * 86_400_000),
    keys,
    signingAlgorithm: EC_P256,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
      new x509.SubjectAlternativeNameExtension(names.map(altName)),
    ],
  });
  return { cert: cert.toString('pem') + '\n', key: await pkcs8Pem(keys.privateKey) };
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
