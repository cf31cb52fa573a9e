// Work the core does on its own (the sweep of expired quotes and invoices) and that fails is told to the
// operator's log through onBackgroundError, not swallowed: the next round tries again.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Core } from '../../src/core/core.ts';
import { loadConfig } from '../../src/core/config.ts';
import { ServiceError } from '../../src/errors.ts';
import { until } from '../support/until.ts';

test('a sweep that fails is told (what, and why), not swallowed', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bg-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const told: [string, unknown][] = [];
  const core = await Core.open(loadConfig({
    SVC_DATA_DIR: dir, SVC_SWEEP_INTERVAL_MS: '200', SVC_LOG_LEVEL: 'silent', SVC_PAYMENTS: 'local',
  }), { onBackgroundError: (what, e) => told.push([what, e]) });
  t.teardown(() => core.close());
  const store = core.ctx.store;
  const write = store.write.bind(store);
  store.write = () => Promise.reject(new ServiceError('service_unavailable', 'the disk is away'));
  await until('a failed sweep told', () => told.length > 0);
  t.is(told[0]![0], 'sweep');
  t.regex(String((told[0]![1] as Error).message), /the disk is away/);
  store.write = write;
});
