// Mutual TLS on the backend (SVC_CLUSTER_*, docs/scale-out.md "Across hosts"): a node binds its backend on an
// address other than 127.0.0.1 only with it; a gateway holding a certificate of the cluster CA is served,
// while a peer without one, with one of another CA, or speaking plain TCP gets no svc/1 at all; the gateway
// checks that the node's certificate names the address it dialled; SIGHUP reloads the files (a broken
// one is refused and the loaded ones stay); and `svcd start`'s gateway workers reach their core over it.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SvcClient } from '../../src/client/client.ts';
import { ROOT, bash, docBlock } from '../docs/blocks.ts';
import { api } from '../support/cluster.ts';
import { BIN, Svcd, runBin } from '../support/svcd.ts';
import { until } from '../support/until.ts';

const dirs: string[] = [];
test.after.always(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

/** A CA dir with members issued by the real `svcd cluster-cert`; returns the dir. */
async function issue(members: [string, ...string[]][], dir = mkdtempSync(join(tmpdir(), 'svc-ca-'))): Promise<string> {
  if (!dirs.includes(dir)) dirs.push(dir);
  for (const [name, ...hosts] of members) {
    const r = await runBin(BIN.svcd, ['cluster-cert', '--ca', dir, name, ...hosts]);
    if (r.code !== 0) throw new Error(`cluster-cert ${name}: ${r.stderr}`);
  }
  return dir;
}

const member = (dir: string, name: string) => ({
  SVC_CLUSTER_CA: join(dir, 'ca-cert.pem'),
  SVC_CLUSTER_CERT: join(dir, `${name}-cert.pem`),
  SVC_CLUSTER_KEY: join(dir, `${name}-key.pem`),
});

const pem = (dir: string, name: string) => {
  const m = member(dir, name);
  const read = (p: string) => execFileSync('cat', [p], { encoding: 'utf8' });
  return { ca: read(m.SVC_CLUSTER_CA), cert: read(m.SVC_CLUSTER_CERT), key: read(m.SVC_CLUSTER_KEY) };
};

/** HEALTH on the node's backend as `who` (PEM texts), or the error it failed with. */
async function health(
  host: string, port: number, who: { ca: string; cert: string; key: string }, servername?: string,
): Promise<string> {
  try {
    const ep = { kind: 'tls' as const, host, port, mutual: who, ...(servername ? { servername } : {}) };
    const c = await SvcClient.connect(ep, 5000);
    try {
      const h = await c.request('HEALTH', {});
      return String(h.status);
    } finally {
      c.close();
    }
  } catch (e) {
    return `refused: ${(e as Error).message}`;
  }
}

test('a node on 127.0.0.2 serves cluster members only; the gateway checks the name; SIGHUP reloads', async (t) => {
  t.timeout(180_000);
  const ca = await issue([['node-1', '127.0.0.2'], ['gw-1']]);
  const other = await issue([['stranger']]);
  const node = new Svcd({ SVC_BACKEND_HOST: '127.0.0.2', ...member(ca, 'node-1') });
  await node.start(['core']);
  t.teardown(async () => { await node.stop(); node.cleanup(); });
  t.regex(node.ready.backend, /^127\.0\.0\.2:\d+$/);
  const port = node.backendPort;

  const gateway = new Svcd({ SVC_CORE_NODES: `127.0.0.2:${port}`, ...member(ca, 'gw-1') });
  await gateway.start(['gateway']);
  t.teardown(async () => { await gateway.stop(); gateway.cleanup(); });
  const base = gateway.ready.http!;
  t.is((await api(base, '/readyz')).status, 200);
  const hello = await api(base, '/api/v1/hello');
  t.is(hello.status, 200, JSON.stringify(hello.body));

  // strangers: a certificate of another CA, none at all, plain TCP
  t.is(await health('127.0.0.2', port, pem(ca, 'gw-1')), 'ok');
  t.regex(await health('127.0.0.2', port, pem(other, 'stranger')), /^refused: /);
  const noCert = { ...pem(ca, 'gw-1'), cert: '', key: '' };
  t.regex(await health('127.0.0.2', port, noCert), /^refused: /);
  const plain = await new Promise<string>((resolve) => {
    const s = connect({ host: '127.0.0.2', port }, () => s.write('{"id":1,"cmd":"HEALTH","args":{}}\n'));
    let got = '';
    s.on('data', (d) => { got += d; });
    s.on('error', () => undefined);
    s.on('close', () => resolve(got));
  });
  t.notRegex(plain, /"ok"/, 'plain TCP gets no svc/1 answer');
  await until('the refused handshake logged',
    () => /a peer without a cluster certificate/.test(node.stdout + node.stderr));

  // a node certificate that does not name 127.0.0.2: the gateway's identity check refuses it
  const saved = mkdtempSync(join(tmpdir(), 'svc-ca-keep-'));
  dirs.push(saved);
  for (const f of ['node-1-cert.pem', 'node-1-key.pem']) copyFileSync(join(ca, f), join(saved, f));
  await issue([['node-1']], ca); // reissued for localhost and 127.0.0.1 only
  node.proc!.kill('SIGHUP');
  await until('the reissued certificate served', async () =>
    /refused: .*altnames/.test(await health('127.0.0.2', port, pem(ca, 'gw-1'))), { every: 200 });
  t.is(await health('127.0.0.2', port, pem(ca, 'gw-1'), 'localhost'), 'ok', 'a name it holds is served');

  // the right files again; then a broken key: refused, the loaded files stay
  for (const f of ['node-1-cert.pem', 'node-1-key.pem']) copyFileSync(join(saved, f), join(ca, f));
  node.proc!.kill('SIGHUP');
  await until('the first certificate served again', async () =>
    (await health('127.0.0.2', port, pem(ca, 'gw-1'))) === 'ok', { every: 200 });
  writeFileSync(join(ca, 'node-1-key.pem'), 'not a key');
  node.proc!.kill('SIGHUP');
  await until('the failed reload logged', () => /svcd reload failed/.test(node.stdout + node.stderr));
  t.regex(node.stdout + node.stderr, /SVC_CLUSTER_KEY/);
  t.is(await health('127.0.0.2', port, pem(ca, 'gw-1')), 'ok', 'the files loaded before still serve');
  t.is(node.proc!.exitCode, null);
});

test('the backend leaves 127.0.0.1 only with mutual TLS, and a wrong pair of files stops the start', async (t) => {
  const ca = await issue([['node-1'], ['node-2']]);
  const cases: [Record<string, string>, RegExp][] = [
    [{ SVC_BACKEND_HOST: '0.0.0.0' }, /SVC_BACKEND_HOST must be 127\.0\.0\.1 .*SVC_CLUSTER_CA/],
    [{ SVC_CLUSTER_CA: join(ca, 'ca-cert.pem') }, /must be set together/],
    [{ ...member(ca, 'node-1'), SVC_CLUSTER_KEY: join(ca, 'node-2-key.pem') }, /SVC_CLUSTER_KEY .* is not the key of/],
    [{ ...member(ca, 'node-1'), SVC_CLUSTER_CA: join(ca, 'node-2-cert.pem') }, /not a CA/],
  ];
  for (const [env, why] of cases) {
    const s = new Svcd(env);
    const r = await s.startExpectingFailure();
    s.cleanup();
    t.is(r.code, 1, r.output);
    t.regex(r.output, why);
  }
});

test('svcd start: gateway workers reach their core over mutual TLS on every address', async (t) => {
  t.timeout(120_000);
  const ca = await issue([['node-1']]);
  const s = new Svcd({ SVC_BACKEND_HOST: '0.0.0.0', SVC_GATEWAY_PROCESSES: '1', ...member(ca, 'node-1') });
  await s.start(['start']);
  t.teardown(async () => { await s.stop(); s.cleanup(); });
  t.is(s.ready.gateway_processes, 1);
  t.is((await api(s.ready.http!, '/readyz')).status, 200);
  const h = await api(s.ready.http!, '/api/v1/hello');
  t.is(h.status, 200, JSON.stringify(h.body));
});

test('docs/scale-out.md\'s certificate block runs as written; openssl verifies each member against the CA',
  async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ca-doc-'));
  dirs.push(dir);
  const block = docBlock('docs/scale-out.md', 'node src/bin/svcd.mjs cluster-cert');
  const ran = await bash(block.body.replaceAll('/etc/svc/cluster-ca', dir), { cwd: ROOT, env: process.env });
  t.is(ran.code, 0, ran.stderr);
  t.regex(ran.stdout, /created the cluster CA/);
  for (const name of ['node-1', 'node-2', 'gw-1', 'gw-2']) {
    // an independent implementation of X.509 path checking: OpenSSL's
    const out = execFileSync('openssl', ['verify', '-purpose', 'sslserver', '-CAfile', join(dir, 'ca-cert.pem'),
      join(dir, `${name}-cert.pem`)], { encoding: 'utf8' });
    t.regex(out, /: OK/);
    execFileSync('openssl', ['verify', '-purpose', 'sslclient', '-CAfile', join(dir, 'ca-cert.pem'),
      join(dir, `${name}-cert.pem`)]);
  }
  const san = ['x509', '-in', join(dir, 'node-1-cert.pem'), '-noout', '-ext', 'subjectAltName'];
  const text = execFileSync('openssl', san, { encoding: 'utf8' });
  t.regex(text, /IP Address:10\.0\.0\.11/);
});
