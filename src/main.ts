// svcd: the composition root. Until the core lands (issue 3) it runs the kernel self-check and
// reports the build; `svcd selfcheck` stays as an operator command afterwards.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ABI_VERSION, kernelWasmPath } from './kernels/index.ts';
import { selfCheck } from './kernels/self-check.ts';

function runSelfCheck(): number {
  const info = JSON.parse(readFileSync(fileURLToPath(new URL('../build/BUILD_INFO.json', import.meta.url)), 'utf8'));
  console.log(`svc kernels: ${kernelWasmPath()} (ABI ${ABI_VERSION}, sha256 ${info.outputs['kernels.wasm']})`);
  const results = selfCheck();
  for (const r of results) console.log(`  ${r.ok ? 'ok  ' : 'FAIL'} ${r.name}`);
  const failed = results.filter((r) => !r.ok).length;
  console.log(failed ? `self-check FAILED (${failed})` : `self-check passed (${results.length} kernels)`);
  return failed ? 1 : 0;
}

const cmd = process.argv[2] ?? 'selfcheck';
switch (cmd) {
  case 'selfcheck':
    process.exitCode = runSelfCheck();
    break;
  default:
    console.error(`svcd: unknown command ${cmd}\nusage: svcd [selfcheck]`);
    process.exitCode = 2;
}
