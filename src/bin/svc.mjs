#!/usr/bin/env node
// `svc` launcher: registers tsx (the project runs TypeScript directly) and runs src/cli/svc.ts.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli/svc.ts');
process.exitCode = await main(process.argv.slice(2));
