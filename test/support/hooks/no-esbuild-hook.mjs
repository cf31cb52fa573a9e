// The resolve hook of no-esbuild.mjs: `esbuild` fails as a missing package does when svc's own
// sources import it (tsx, which runs them, keeps its copy) — every time, or the first
// HIDE_ESBUILD_TIMES times (then the package is there again, as after a repaired install).
let left = Number(process.env.HIDE_ESBUILD_TIMES || Infinity);

export async function resolve(specifier, context, next) {
  if (specifier === 'esbuild' && left > 0 && /\/src\/[^/]+\/[^/]+\.ts$/.test(context.parentURL ?? '')) {
    left--;
    const e = new Error(`Cannot find package '${specifier}' (hidden by test/support/hooks/no-esbuild.mjs)`);
    e.code = 'ERR_MODULE_NOT_FOUND';
    throw e;
  }
  return next(specifier, context);
}
