// Messages between svcd's primary and its gateway workers go over node's IPC channel. A worker that died a
// moment ago (kill -9, a crash) still looks connected until the primary reads its end-of-file; a message
// sent then fails with EPIPE, and Node reports that as an 'error' event on the channel, which nobody hearing
// ends the sender: the primary, and every worker with it. sendOrDrop drops such a message instead.
import test from 'ava';
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { sendOrDrop } from '../../src/ipc.ts';

const CHILD = join(mkdtempSync(join(tmpdir(), 'svc-ipc-')), 'child.cjs');
writeFileSync(CHILD, 'process.send("ready", () => process.exit(0));\n');
test.after.always(() => rmSync(dirname(CHILD), { recursive: true, force: true }));

/** A child that says it is ready and exits at once; resolves when its "ready" arrives. */
function shortLived(): Promise<ChildProcess> {
  const child = fork(CHILD, [], { execArgv: [] });
  return new Promise((resolve) => child.once('message', () => resolve(child)));
}

/** Blocks this thread (its event loop too) for `ms`: the child's exit is not read meanwhile. */
const block = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

test('a message to a process that just died: a plain send emits an error event; sendOrDrop drops it', async (t) => {
  // the hazard, heard here by a listener (without one, this process would end)
  const a = await shortLived();
  block(300);
  t.true(a.connected, 'the channel still looks open: its end-of-file is not read yet');
  const heard = new Promise<Error>((resolve) => a.once('error', resolve));
  a.send({ type: 'svcd:stop' });
  t.regex((await heard).message, /EPIPE|channel closed/);
  // sendOrDrop on the same race: no error event, the failure goes to its callback
  const b = await shortLived();
  block(300);
  let emitted = false;
  b.on('error', () => { emitted = true; });
  const failed = await new Promise<Error | null>((resolve) => sendOrDrop(b, { type: 'svcd:stop' }, resolve));
  t.regex(String(failed?.message), /EPIPE|channel closed/);
  await new Promise((r) => setTimeout(r, 50));
  t.false(emitted, 'no error event');
  // and on a channel already known closed
  await new Promise((r) => b.connected ? b.once('disconnect', r) : r(null));
  t.notThrows(() => sendOrDrop(b, { type: 'svcd:stop' }));
  await new Promise((r) => setTimeout(r, 50));
  t.false(emitted);
});
