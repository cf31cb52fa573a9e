// A child process for the key rotation crash test: rotates the key set of the data dir in argv[2]
// over and over, printing "rotated <n>" after each, until it is killed (SIGKILL, at any point).
import { NodeIdentity } from '../../src/core/node-identity.ts';

const id = NodeIdentity.loadOrCreate(process.argv[2]!);
for (let n = 1; ; n++) {
  id.rotate(new Date());
  process.stdout.write(`rotated ${n}\n`);
  await new Promise((r) => setImmediate(r)); // lets the write reach the pipe
}
