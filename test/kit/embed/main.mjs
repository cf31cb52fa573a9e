// Node, Deno and Bun entry: node|bun main.mjs, deno run --allow-read --allow-net main.mjs; prints JSON.
import { check } from './check.js';

const { readFile } = await import('node:fs/promises');
const bundle = JSON.parse(await readFile(new URL('./bundle.json', import.meta.url), 'utf8'));
const runtime = globalThis.Deno ? `deno ${globalThis.Deno.version.deno}`
  : globalThis.Bun ? `bun ${globalThis.Bun.version}` : `node ${process.version}`;
console.log(JSON.stringify(await check(bundle, runtime)));
