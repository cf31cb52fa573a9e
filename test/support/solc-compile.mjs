// Compiles one Solidity test contract with solc-js into the JSON fixture the tests deploy ({compiler,
// optimizer_runs, abi, bytecode}); the fixtures' READMEs (test/watchers/fixtures, test/x402/fixtures) say how.
//   node solc-compile.mjs <dir> <Contract> <out.json>     reads <dir>/<Contract>.sol, writes <dir>/<out.json>
// solc is not a dependency of svc: run it from a directory where `npm install solc@0.8.37` was run.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import solc from 'solc';

const [dir, name, outFile] = process.argv.slice(2);
if (!dir || !name || !outFile) {
  console.error('usage: node solc-compile.mjs <dir> <Contract> <out.json>');
  process.exit(2);
}
const file = `${name}.sol`;
const input = {
  language: 'Solidity',
  sources: { [file]: { content: readFileSync(join(dir, file), 'utf8') } },
  settings: {
    optimizer: { enabled: true, runs: 200 },
    outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
  },
};
const out = JSON.parse(solc.compile(JSON.stringify(input)));
for (const e of out.errors ?? []) console.error(e.formattedMessage);
// a warning is printed and tolerated; an error must not leave a stale or empty fixture behind
if ((out.errors ?? []).some((e) => e.severity === 'error')) process.exit(1);
const c = out.contracts[file][name];
writeFileSync(join(dir, outFile), JSON.stringify({
  compiler: `solc-js ${solc.version()}`, optimizer_runs: 200, abi: c.abi, bytecode: `0x${c.evm.bytecode.object}`,
}, null, 2) + '\n');
console.log('ok', solc.version(), c.evm.bytecode.object.length / 2, 'bytes');
