#!/usr/bin/env node
// `svcd` launcher: runs src/main.ts, compiled (build/js) or through tsx (launch.mjs).
import { load } from './launch.mjs';

await load('main');
