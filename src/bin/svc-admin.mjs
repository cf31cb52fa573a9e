#!/usr/bin/env node
// `svc-admin` launcher: registers tsx and runs src/cli/svc-admin.ts.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli/svc-admin.ts');
process.exitCode = await main(process.argv.slice(2));
