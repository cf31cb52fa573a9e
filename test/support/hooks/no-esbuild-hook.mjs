// The resolve hook of no-esbuild.mjs: `esbuild` fails as a missing package does when svc's own
// code imports it — its sources, or their build in build/js (tsx, which may run the sources, keeps its
// copy) — every time, or the first
// HIDE_ESBUILD_TIMES times (then the package is there again, as after a repaired install).
let left = Number(process.env.HIDE_ESBUILD_TIMES || Infinity);

const OWN = /\/(src\/[^/]+\/[^/]+\.ts|build\/js\/[^/]+\/[^/]+\.js)$/;

export async function resolve(specifier, context, next) {
  if (specifier === 'esbuild' && left > 0 && OWN.test(context.parentURL ?? '')) {
    left--;
    const e = new Error(`Cannot find package '${specifier}' (hidden by test/support/hooks/no-esbuild.mjs)`);
    e.code = 'ERR_MODULE_NOT_FOUND';
    throw e;
  }
  return next(specifier, context);
}
