// Ed25519 verification with a raw 32-byte public key, in any runtime: WebCrypto where the runtime
// has Ed25519 (Node ≥ 20, Deno, Bun, Chromium ≥ 137, Firefox, Safari ≥ 17), else @noble/curves
// in strict RFC 8032 mode (zip215: false), which accepts what OpenSSL (the server's node:crypto)
// accepts for every signature the service makes.
import { ed25519 } from '@noble/curves/ed25519.js';

export type Ed25519Backend = 'webcrypto' | 'noble';

let webcrypto: Promise<boolean> | null = null;
let forced: Ed25519Backend | null = null;

/** Tests and cautious embedders may pin a backend; null returns to detection. */
export function useEd25519Backend(backend: Ed25519Backend | null): void {
  forced = backend;
}

/** Whether this runtime verifies Ed25519 with WebCrypto (probed once). */
function hasWebCrypto(): Promise<boolean> {
  webcrypto ??= (async () => {
    try {
      const subtle = globalThis.crypto?.subtle;
      if (!subtle) return false;
      await subtle.importKey('raw', ed25519.getPublicKey(new Uint8Array(32)), { name: 'Ed25519' }, false, ['verify']);
      return true;
    } catch {
      return false;
    }
  })();
  return webcrypto;
}

export async function ed25519Backend(): Promise<Ed25519Backend> {
  return forced ?? ((await hasWebCrypto()) ? 'webcrypto' : 'noble');
}

/** true only for a valid signature; malformed keys or signatures are simply invalid. */
export async function verifyEd25519(
  publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array,
): Promise<boolean> {
  const bytes = (v: unknown) => v instanceof Uint8Array;
  if (!bytes(publicKey) || !bytes(message) || !bytes(signature)) return false;
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  if ((await ed25519Backend()) === 'webcrypto') {
    try {
      const subtle = globalThis.crypto.subtle;
      const key = await subtle.importKey('raw', publicKey as BufferSource, { name: 'Ed25519' }, false, ['verify']);
      return await subtle.verify({ name: 'Ed25519' }, key, signature as BufferSource, message as BufferSource);
    } catch {
      return false;
    }
  }
  try {
    return ed25519.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
}
