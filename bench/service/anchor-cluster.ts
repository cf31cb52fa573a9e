// The bare anchor (anchor.ts `bare`) in K node:cluster workers sharing one port: the same number of processes
// answering HTTP as svcd with K gateway workers, for the free quote's ratio at equal footing (bench/service.ts).
// The primary only hands connections to the workers, as svcd's does; `bare` keeps no data, so K copies share
// nothing. Usage: node --import tsx bench/service/anchor-cluster.ts <K> <temp dir>; prints {"url":…} once every
// worker listens.
import cluster from 'node:cluster';
import { fileURLToPath } from 'node:url';

const k = Number(process.argv[2]);
const dir = process.argv[3];
if (!Number.isInteger(k) || k < 1 || k > 16 || !dir) {
  console.error('usage: anchor-cluster.ts <workers 1..16> <temp dir>');
  process.exit(2);
}
cluster.setupPrimary({
  exec: fileURLToPath(new URL('./anchor.ts', import.meta.url)), args: ['bare', dir],
  execArgv: ['--import', 'tsx'], silent: true,
});
const urls = await Promise.all(Array.from({ length: k }, () => new Promise<string>((resolve, reject) => {
  const w = cluster.fork();
  w.once('exit', (code) => reject(new Error(`anchor worker exited ${code}`)));
  let out = '';
  w.process.stdout!.on('data', (b: Buffer) => {
    out += b.toString('utf8');
    const line = out.split('\n')[0];
    if (out.includes('\n')) resolve((JSON.parse(line!) as { url: string }).url);
  });
})));
if (new Set(urls).size !== 1) throw new Error(`the workers listen apart: ${urls.join(', ')}`);
console.log(JSON.stringify({ url: urls[0], mode: 'bare', workers: k }));
process.on('SIGTERM', () => {
  for (const w of Object.values(cluster.workers ?? {})) w?.kill('SIGTERM');
  process.exit(0);
});
