// Linux /proc readers shared by tests and benches: a process's stat fields and the live processes it
// started (a svcd primary's gateway workers).
import { readFileSync, readdirSync } from 'node:fs';

/**
 * The fields of /proc/<pid>/stat after the command name (which may hold spaces): [0] the state, [1] the
 * parent pid, [11] and [12] user and system time in clock ticks. Throws when the process is gone. With
 * `thread`, the fields of that one thread of the process (its main thread's id is the pid).
 */
export function procStat(pid: number, thread?: number): string[] {
  const fields = readFileSync(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`, 'utf8');
  return fields.slice(fields.lastIndexOf(')') + 2).split(' ');
}

/** The live (not zombie) processes whose parent is `ppid`, in pid order. */
export function childPids(ppid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const [state, parent] = procStat(Number(d));
      if (Number(parent) === ppid && state !== 'Z') out.push(Number(d));
    } catch { /* gone meanwhile */ }
  }
  return out.sort((a, b) => a - b);
}
