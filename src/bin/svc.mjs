#!/usr/bin/env node
// `svc` launcher: runs src/cli/svc.ts, compiled (build/js) or through tsx (launch.mjs).
import { load } from './launch.mjs';

const { main } = await load('cli/svc');
process.exitCode = await main(process.argv.slice(2));
