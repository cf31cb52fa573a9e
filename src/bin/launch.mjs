// What the launchers (svcd, svc, svc-admin) share: run the compiled JavaScript in build/js when it is the
// build of these very sources (src/tools/build-js.mjs, run by `npm install` and before packing), else the
// TypeScript sources through tsx, so an edited tree is never run stale. Plain JavaScript starts in about
// half the time: no TypeScript is compiled at run time, in this process or its worker threads.
import { jsBuildCurrent } from './js-build-info.mjs';

/** Imports the program `module` (a path under src/ without its extension, e.g. `main`). */
export async function load(module) {
  if (process.env.SVC_RUN_SOURCES !== '1' && jsBuildCurrent()) return import(`../../build/js/${module}.js`);
  let register;
  try {
    ({ register } = await import('tsx/esm/api'));
  } catch {
    throw new Error('build/js is missing or older than src/, and tsx (a devDependency) is not installed to run '
      + 'the sources: run `npm run build` where the devDependencies are, or install from a packed release');
  }
  register();
  return import(`../${module}.ts`);
}
