// What the two certificate makers share (the edge's self-signed certificate, core/tls-material.ts; the
// cluster CA and its members, cli/cluster-cert.ts): @peculiar/x509 on Node's WebCrypto, ECDSA P-256,
// a positive random serial, subject alternative names from host strings, and a key as PKCS#8 PEM.
import { webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import 'reflect-metadata'; // @peculiar/x509 needs it (tsyringe)
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

export { x509 };

export const EC_P256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** A new P-256 key pair, its private key exportable (to write it out). */
export function newKeyPair(): Promise<CryptoKeyPair> {
  return webcrypto.subtle.generateKey(EC_P256, true, ['sign', 'verify']) as Promise<CryptoKeyPair>;
}

/** 16 random bytes as a positive serial number (a high bit set would make it negative in DER). */
export function randomSerial(): string {
  return Buffer.from(webcrypto.getRandomValues(new Uint8Array(16))).toString('hex').replace(/^[89a-f]/, '1');
}

/** A subject alternative name: an IP address entry for an address, a DNS entry otherwise. */
export function altName(host: string): { type: 'ip' | 'dns'; value: string } {
  return { type: isIP(host) ? 'ip' : 'dns', value: host };
}

/** A private key as PKCS#8 PEM. */
export async function pkcs8Pem(key: CryptoKey): Promise<string> {
  const body = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key)).toString('base64').match(/.{1,64}/g)!;
  return `-----BEGIN PRIVATE KEY-----\n${body.join('\n')}\n-----END PRIVATE KEY-----\n`;
}
