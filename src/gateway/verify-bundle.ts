// The /verify page's script: src/discovery/verify-browser.ts and the embedding kit it imports,
// bundled for the browser by esbuild (docs/decisions.md "The browser verifier page") into one
// same-origin ES module — built once per process on first use, in memory, so it can never be stale
// against the sources the process runs. Its hash names it: the page asks for ?v=<hash>, which is
// answered immutable; gateway worker processes build byte-identical bundles (esbuild is deterministic).
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { VERIFY_BROWSER_ENTRY } from '../discovery/pages.ts';
import { ServiceError } from '../errors.ts';

export interface VerifyBundle {
  raw: Buffer;
  gzip: Buffer;
  /** first 32 hex digits of the bundle's SHA-256: the ?v= of its URL */
  version: string;
  etag: string;
  gzipEtag: string;
}

const hashOf = (b: Buffer) => createHash('sha256').update(b).digest('hex').slice(0, 32);

async function build(): Promise<VerifyBundle> {
  const esbuild = await import('esbuild');
  const out = await esbuild.build({
    entryPoints: [fileURLToPath(VERIFY_BROWSER_ENTRY)], bundle: true, write: false, format: 'esm',
    platform: 'browser', target: 'es2022', minify: true, legalComments: 'none', logLevel: 'silent',
    // load.ts reads files through a computed node:fs import on file: URLs only; never in a page
    external: ['node:*'],
  });
  const raw = Buffer.from(out.outputFiles[0]!.contents);
  const gzip = gzipSync(raw, { level: 9 });
  const version = hashOf(raw);
  return { raw, gzip, version, etag: `"${version}"`, gzipEtag: `"${hashOf(gzip)}"` };
}

let bundle: Promise<VerifyBundle> | null = null;

/**
 * The bundle, built on the first call. A failed build (esbuild missing from an install without dev
 * dependencies, say) is a 503, never a 500, and is retried on the next call.
 */
export function verifyBundle(): Promise<VerifyBundle> {
  bundle ??= build().catch(() => {
    bundle = null;
    // the cause names paths on the host: not for the public answer
    throw new ServiceError('service_unavailable', 'the verifier page\'s script could not be built on this node');
  });
  return bundle;
}
