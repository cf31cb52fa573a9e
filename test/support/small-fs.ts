// A small filesystem of its own for tests that fill a disk: a tmpfs of a given size mounted on a fresh
// directory (root only), filled up to a given free space with one file, and emptied again by removing it.
// Unmounted at teardown, and by a watchdog if this process ends without it.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Need } from './needs.ts';

const isRoot = process.getuid?.() === 0;

/** testNeeding's need: root, to mount a tmpfs. */
export const SMALL_FS: Need = {
  what: 'root, to mount a tmpfs',
  present: isRoot && spawnSync('sh', ['-c', 'command -v mount && command -v fallocate']).status === 0,
  hint: 'run as root (.ci/run does)',
};

export interface SmallFs {
  dir: string;
  /** fills the disk until `freeBytes` (about) are left */
  fill(freeBytes: number): void;
  /** removes the filling */
  empty(): void;
  /** bytes free now */
  free(): number;
  unmount(): void;
}

export function smallFs(t: { teardown(fn: () => unknown): void }, sizeMiB: number): SmallFs {
  const dir = mkdtempSync(join(tmpdir(), 'svc-smallfs-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m`, 'tmpfs', dir]);
  spawn('sh', ['-c', `while kill -0 ${process.pid} 2>/dev/null; do sleep 2; done; umount -l '${dir}'; rmdir '${dir}'`],
    { detached: true, stdio: 'ignore' }).unref();
  const filler = join(dir, 'filler');
  const free = () => { const s = statfsSync(dir); return s.bavail * s.bsize; };
  let mounted = true;
  const fs: SmallFs = {
    dir,
    fill(freeBytes) {
      rmSync(filler, { force: true });
      const size = free() - freeBytes;
      if (size > 0) execFileSync('fallocate', ['-l', String(size), filler]);
    },
    empty() { rmSync(filler, { force: true }); },
    free,
    unmount() {
      if (!mounted) return;
      mounted = false;
      execFileSync('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  t.teardown(() => fs.unmount());
  return fs;
}
