// The quick tier (npm run test:quick) is chosen from what each test imports: a test that starts svcd,
// a browser, PostgreSQL, a chain or any child process (itself or through a helper) stays out of it.
import test from 'ava';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { quickTier } from '../../src/tools/test-tiers.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

test('a test joins the quick tier by what it imports, its helpers\' imports included', (t) => {
  const root = mkdtempSync(join(tmpdir(), 'svc-tiers-'));
  mkdirSync(join(root, 'test/support'), { recursive: true });
  mkdirSync(join(root, 'test/unit'), { recursive: true });
  const file = (p: string, text: string) => writeFileSync(join(root, p), text);
  file('test/support/svcd.ts', "import { spawn } from 'node:child_process';\n");
  file('test/support/fixture.ts', "import { Svcd } from './svcd.ts';\n");
  file('test/support/pure.ts', "export const x = 1;\n");
  file('test/unit/pure.test.ts', "import test from 'ava';\nimport { x } from '../support/pure.ts';\n");
  file('test/unit/svcd.test.ts', "import { Svcd } from '../support/svcd.ts';\n");
  file('test/unit/through.test.ts', "import { f } from '../support/fixture.ts';\n");
  file('test/unit/proc.test.ts', "import { execFile } from 'node:child_process';\n");
  file('test/unit/browser.test.ts', "import { chromium } from 'playwright-core';\n");
  t.deepEqual(quickTier(root), ['test/unit/pure.test.ts']);
});

test('the quick tier of this repository: unit, protocol, guards and the store contract, no svcd', (t) => {
  const quick = quickTier(ROOT);
  for (const f of ['test/protocol/wire.test.ts', 'test/guards/money.test.ts', 'test/store/store.test.ts',
    'test/layering.test.ts', 'test/core/shape.test.ts']) t.true(quick.includes(f), f);
  for (const f of ['test/gateway/api.test.ts', 'test/gateway/pages.test.ts', 'test/cluster/kill-nodes.test.ts',
    'test/store/postgres-svcd.test.ts']) t.false(quick.includes(f), f);
});
