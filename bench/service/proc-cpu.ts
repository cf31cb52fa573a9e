// The CPU time servers have used, from /proc (Linux only): what `bench:cpu` reads around a fixed number
// of requests (cpu.ts, and its ladder: ladder-bench.ts).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { procStat } from '../../test/support/proc.ts';

/** how finely /proc/<pid>/stat counts CPU time (ms): one clock tick */
export const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim() || 100);

/** CPU time (ms) the processes have used: user + system, every thread. */
export function cpuMs(pids: number[]): number {
  return pids.reduce((sum, pid) => {
    const f = procStat(pid);
    return sum + (Number(f[11]) + Number(f[12])) * TICK_MS;
  }, 0);
}

/**
 * CPU time (ms) of a process's main thread: the event loop every request's JavaScript runs on (svcd's
 * core with its gateway in one process; the core alone with workers). Where it nears the wall time, it is
 * what limits the rate, whatever the other threads (GC, libuv's pool, kernels) have left.
 */
export function mainThreadMs(pid: number): number {
  const f = procStat(pid, pid);
  return (Number(f[11]) + Number(f[12])) * TICK_MS;
}

/**
 * CPU time (ms) the whole machine has spent busy, every core: user, nice, system, interrupts, and the
 * time the hypervisor gave to others (steal), from /proc/stat. Less what the bench's own processes used,
 * it is what other work took while a server was measured.
 */
export function machineBusyMs(): number {
  const line = readFileSync('/proc/stat', 'utf8').slice(0, 200).split('\n', 1)[0]!;
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = f;
  return (user + nice + system + irq + softirq + steal) * TICK_MS;
}
