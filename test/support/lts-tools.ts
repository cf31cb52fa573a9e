// Tools that need a newer Node than the machine's, installed by CI (.ci/run) into a cache outside the
// clone: the Node LTS binaries from the npm registry's `node` packages, and the MCP Inspector (its CLI
// needs Node 22.19 or later). Tests that use them say so (testNeeding) and are skipped, or fail under CI,
// when they are missing. SVC_CI_CACHE moves the cache.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Need } from './needs.ts';

export const CI_CACHE = process.env.SVC_CI_CACHE
  ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'svc-ci');

/** The Node binary of an LTS line (22, 24), as .ci/run installs it. */
export const ltsNode = (major: number): string => join(CI_CACHE, `node${major}`, 'node_modules', 'node', 'bin', 'node');

/** The MCP Inspector's launcher (`mcp-inspector`), as .ci/run installs it. */
export const INSPECTOR = join(CI_CACHE, 'inspector', 'node_modules', '@modelcontextprotocol', 'inspector', 'clients',
  'launcher', 'build', 'index.js');

export const INSPECTOR_NEED: Need = {
  what: `the MCP Inspector and Node 24 in ${CI_CACHE}`,
  present: existsSync(INSPECTOR) && existsSync(ltsNode(24)),
  hint: 'run .ci/run once, or install node@24 and @modelcontextprotocol/inspector there (see .ci/run)',
};
