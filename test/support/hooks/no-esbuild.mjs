// Loaded with `node --import` into a svcd under test: registers a resolve hook under which svc cannot
// import `esbuild`, as in an install whose esbuild (or its platform binary) is missing.
import { register } from 'node:module';

register('./no-esbuild-hook.mjs', import.meta.url);
