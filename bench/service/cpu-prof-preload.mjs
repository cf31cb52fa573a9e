// Preloaded into svcd by `bench:service --profile` (NODE_OPTIONS=--import=…; Node 20 refuses --cpu-prof
// there): runs V8's sampling profiler on the main thread from start to exit and writes a .cpuprofile
// into BENCH_CPU_PROF_DIR, as --cpu-prof would. svcd exits through process.exit after SIGTERM.
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const dir = process.env.BENCH_CPU_PROF_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 1000 });
  session.post('Profiler.start');
  // a same-thread inspector session answers synchronously, so this completes inside 'exit'
  process.on('exit', () => {
    session.post('Profiler.stop', (err, res) => {
      if (err) return;
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `svcd-${process.pid}.cpuprofile`), JSON.stringify(res.profile));
    });
  });
}
