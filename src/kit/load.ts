// Where the kit's kernels come from: bytes, a compiled module or a Response the caller hands over;
// by default the kernels.wasm shipped in the package — read from disk where the module was loaded
// from a file (Node, Deno, Bun), fetched and compiled while streaming where it came over HTTP
// (browsers). One instance per source is enough: calls never overlap in one JavaScript thread.
import { Kernels } from '../kernels/kernels.ts';
import { instantiateKernelsAsync, type KernelSource } from '../kernels/instance.ts';

/** The module shipped in the package: build/kernels.wasm, two levels above build/kit/kit/*.js. */
export const KERNELS_WASM_URL: URL = new URL('../../kernels.wasm', import.meta.url);
// the same file when this code runs from the repository's src/ (tests, the CLI under tsx)
const SOURCE_TREE_WASM_URL = new URL('../../build/kernels.wasm', import.meta.url);

let shipped: Promise<Kernels> | null = null;

/**
 * Kernels over one instance of build/kernels.wasm. With no argument: the package's own file,
 * loaded once and shared. Otherwise from `source`: a URL (fetched, or read when file:), the
 * module's bytes, a compiled WebAssembly.Module, or a fetch() Response.
 */
export function loadKernels(source?: KernelSource | URL | string): Promise<Kernels> {
  if (source === undefined) {
    shipped ??= fromUrl(KERNELS_WASM_URL, SOURCE_TREE_WASM_URL).catch((e: unknown) => {
      shipped = null;
      throw e;
    });
    return shipped;
  }
  if (typeof source === 'string' || source instanceof URL) return fromUrl(new URL(source, baseUrl()));
  return instantiateKernelsAsync(source).then((raw) => new Kernels(raw));
}

function baseUrl(): string | undefined {
  const loc = (globalThis as { location?: { href?: string } }).location;
  return loc?.href;
}

async function fromUrl(url: URL, fallback?: URL): Promise<Kernels> {
  if (url.protocol !== 'file:') {
    return new Kernels(await instantiateKernelsAsync(fetch(url)));
  }
  // Node, Deno and Bun all read files through node:fs; the specifier is a variable so that
  // bundlers for the browser leave it alone (this branch never runs there)
  const fsModule = 'node:fs/promises';
  const fs = (await import(fsModule)) as { readFile(u: URL): Promise<Uint8Array> };
  let bytes: Uint8Array;
  try {
    bytes = await fs.readFile(url);
  } catch (e) {
    if (!fallback || fallback.protocol !== 'file:') throw e;
    bytes = await fs.readFile(fallback);
  }
  return new Kernels(await instantiateKernelsAsync(bytes as BufferSource));
}
