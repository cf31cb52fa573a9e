#!/usr/bin/env node
// `svcd` launcher: registers tsx and runs src/main.ts. V8 flag: compile WASM with the optimizing
// tier (src/kernels/wasm.ts explains why; it also sets it at run time when this launcher is bypassed).
import { register } from 'tsx/esm/api';

register();
await import('../main.ts');
