#!/usr/bin/env node
// `svc-admin` launcher: runs src/cli/svc-admin.ts, compiled (build/js) or through tsx (launch.mjs).
import { load } from './launch.mjs';

const { main } = await load('cli/svc-admin');
process.exitCode = await main(process.argv.slice(2));
