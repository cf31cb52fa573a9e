// Deno entry: deno run --allow-read deno-main.js <kernels.wasm> <bundle.json>; prints the results as JSON.
import { runVectors } from './vector-runner.js';

const [wasmPath, bundlePath] = Deno.args;
const results = await runVectors(await Deno.readFile(wasmPath), JSON.parse(await Deno.readTextFile(bundlePath)));
console.log(JSON.stringify({ runtime: `deno ${Deno.version.deno}`, results }));
