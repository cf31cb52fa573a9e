// A node that starts again after an earlier process of it died (kill -9) clears that process's leases
// at once, so its sweeps run from the start instead of after the dead holder's lease runs out. Leases
// of other nodes are theirs and stay.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { holderId } from '../../src/core/leases.ts';
import { SWEEP_LEASE } from '../../src/core/sweeps.ts';
import { put } from '../../src/store/store.ts';
import { openCore } from '../support/core-fixture.ts';

test('an earlier process\'s sweep lease is taken over at start; another node\'s lease stays', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-stale-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const first = await openCore(t, {}, { dir });
  const nodeId = first.ctx.identity.nodeId;
  const later = Date.now() + 3_600_000;
  const dead = { holder: `${nodeId}#deadbeef`, node_id: nodeId, expires_ms: later };
  const other = { holder: 'other-node#12345678', node_id: 'other-node', expires_ms: later };
  await first.ctx.store.write([put('leases', SWEEP_LEASE, dead), put('leases', 'watcher:USDC_BASE', other)]);
  await first.close();
  const again = await openCore(t, {}, { dir });
  const sweeps = await again.ctx.store.get('leases', SWEEP_LEASE);
  t.is(sweeps?.holder, holderId(nodeId), 'this process holds the sweep lease from its start');
  t.deepEqual(await again.ctx.store.get('leases', 'watcher:USDC_BASE'), other);
});
