// The CLI's checks of what a node signed, in the client kit's verifiers (src/client/verify.ts): `pulse`
// fetches a published pulse and checks it with its link to the one before; `verify-pulse` and
// `verify-log` check a result offline. Offline means no connection at all: verify-pulse given its two
// pulse files and the node key never connects, so a node that is down cannot change its verdict; it
// fetches only with --fetch. Verdicts print one check a line (as `svcd selfcheck`); --json as before.
import { readFileSync } from 'node:fs';
import { Argument, type Command } from 'commander';
import { ServiceError } from '../errors.ts';
import {
  verifyPublishedPulse, verifyPulse, verifyTlogProof, type Check, type NodeKey, type PulseResult,
} from '../client/verify.ts';
import type { SignedPulse } from '../protocol/pulse-format.ts';
import { examples, nonNegativeInt } from './conventions.ts';
import { HUMAN, UsageError, VerificationError, checkLines, type Printable, type Runner } from './output.ts';
import { M } from './service-flags.ts';
import { session } from './session.ts';
import type { Settings } from './settings.ts';

/** A PULSE reply: the pulse, its signing key, and the node's key set (retired keys too). */
type PublishedPulse = SignedPulse & { public_key?: string; node_keys?: NodeKey[] };

/** What the edge sent for PULSE has a pulse with an index (the verifier checks the rest). */
function isPublishedPulse(x: unknown): x is PublishedPulse {
  const p = (x as { pulse?: { index?: unknown } | null }).pulse;
  return typeof p === 'object' && p !== null && Number.isSafeInteger(p.index);
}

function publishedPulse(x: Record<string, unknown>): PublishedPulse {
  if (!isPublishedPulse(x)) throw new ServiceError('internal', 'the edge sent a PULSE answer without a pulse index');
  return x;
}

/** --node-key / --public-key: one key, or several comma-separated (a key set spanning a rotation). */
const keyList = (v: string): NodeKey[] => v.split(',').map((k) => k.trim()).filter(Boolean)
  .map((public_key) => ({ public_key }));

export const failedChecks = (checks: { name: string; ok: boolean }[]) =>
  checks.filter((c) => !c.ok).map((c) => c.name).join('; ');

/** An offline check's verdict: exit 1 naming the failed checks, else every check with its outcome. */
function verdict(v: { ok: boolean; checks: Check[] }, file: string): Printable {
  if (!v.ok) throw new VerificationError(`verification FAILED: ${failedChecks(v.checks)}`, v.checks);
  const text = [`${file}:`, ...checkLines(v.checks), `verified: all ${v.checks.length} checks passed`];
  return { verified: true, checks: v.checks.map((c) => `${c.ok ? 'ok' : 'FAIL'} ${c.name}`), [HUMAN]: text.join('\n') };
}

const readJson = (file: string): unknown => JSON.parse(readFileSync(file, 'utf8'));

export function addVerifyCommands(program: Command, settings: () => Settings, run: Runner): void {
  addVerifyPulse(program, settings, run);
  addVerifyLog(program, run);
  addPulse(program, settings, run);
}

interface PulseFlags { result: string; pulse?: string; reveal?: string; publicKey?: string; fetch?: boolean }

function addVerifyPulse(program: Command, settings: () => Settings, run: Runner): void {
  const c = program.command('verify-pulse')
    .description('check a GET_PULSE output offline once its seed is revealed (docs/verify.md)')
    .requiredOption('--result <file>', 'the get-pulse result (JSON, as printed by --json)')
    .option('--pulse <file>', 'pulse k, the result\'s pulse (JSON, as svc --json pulse <k> prints it)')
    .option('--reveal <file>', 'pulse k+1, which reveals the seed (JSON, as svc --json pulse <k+1> prints it)')
    .option('--public-key <b64url>', 'the node\'s Ed25519 public key (the manifest\'s node.public_key; after a'
      + ' key rotation its keys, comma-separated)')
    .option('--fetch', 'online: fetch the pulses not given from the edge, and trust the key set it sends when'
      + ' --public-key is not given')
    .action((o: PulseFlags) => run(() => verifyPulseFiles(o, settings)));
  c.addHelpText('after', '\nOffline (no connection): --pulse, --reveal and --public-key. With --fetch, what is'
    + '\nmissing comes from the edge. Exit 1 when a check fails.');
  examples(c, [
    [`svc ${M} --json get-pulse q1… > result.json`],
    ['svc verify-pulse --fetch --result result.json', 'once the next pulse has revealed the seed'],
    ['svc verify-pulse --result result.json --pulse p42.json --reveal p43.json --public-key <node.public_key>',
      'offline'],
  ]);
}

async function verifyPulseFiles(o: PulseFlags, settings: () => Settings): Promise<Printable> {
  const result = readJson(o.result) as PulseResult;
  if (!result.pulse || typeof result.pulse.index !== 'number') {
    throw new UsageError(`${o.result} is not a get-pulse result`);
  }
  const missing = [o.pulse ? '' : '--pulse', o.reveal ? '' : '--reveal', o.publicKey ? '' : '--public-key']
    .filter(Boolean);
  if (!o.fetch && missing.length) {
    throw new UsageError(`offline, verify-pulse needs ${missing.join(', ')} (pulse files: svc --json pulse <index>;`
      + ' the key: node.public_key in the node\'s manifest); or --fetch to fetch them from the edge');
  }
  const k = result.pulse.index;
  const [committed, revealing] = o.pulse && o.reveal
    ? [readJson(o.pulse) as PublishedPulse, readJson(o.reveal) as PublishedPulse]
    : await fetchPulses(settings(), k, o);
  // online, the key set the edge sent (after a key rotation the two pulses may name different keys)
  const sent = [committed, revealing].flatMap((p) => [...p.node_keys ?? [], ...p.public_key ? [p] : []]);
  const key = o.publicKey ? keyList(o.publicKey) : sent.filter((p) => typeof p.public_key === 'string');
  if (!key.length) throw new UsageError('--public-key is required: the pulses name no key');
  return verdict(await verifyPulse(result, committed, revealing, key as NodeKey[]), o.result);
}

/** Pulses k and k+1, each from its file or else from the edge (--fetch), on one connection. */
async function fetchPulses(s: Settings, k: number, o: PulseFlags): Promise<[PublishedPulse, PublishedPulse]> {
  return session(s, async (c) => {
    const one = async (file: string | undefined, index: number) =>
      (file ? readJson(file) : publishedPulse(await c.request('PULSE', { index }))) as PublishedPulse;
    const committed = await one(o.pulse, k);
    const revealing = await one(o.reveal, k + 1).catch((e: unknown) => {
      if (e instanceof ServiceError && e.code === 'not_found') {
        throw new ServiceError('not_found', `pulse ${k + 1} is not published yet: the seed is revealed when the`
          + ` period ends (period ${committed.pulse.period_ms} ms)`);
      }
      throw e;
    });
    return [committed, revealing];
  });
}

function addVerifyLog(program: Command, run: Runner): void {
  const c = program.command('verify-log')
    .description('check a TIMESTAMP_PROOF or MACHINE_EVENT_LOG result offline:'
      + ' signed checkpoint + RFC 6962 inclusion (docs/verify.md)')
    .requiredOption('--result <file>', 'the execution result (JSON, as printed by --json)')
    .option(
      '--public-key <b64url>',
      'node Ed25519 public key you trust (default: the one in the result; pin yours from the manifest)',
    )
    .action((o: { result: string; publicKey?: string }) => run(async () => {
      const r = readJson(o.result) as {
        tlog_proof?: string;
        log?: { entry_base64?: string; public_key?: string; origin?: string };
      };
      if (!r.tlog_proof || !r.log?.entry_base64) {
        throw new UsageError(`${o.result} is not a timestamp-proof or machine-event-log result`);
      }
      const key = o.publicKey ? keyList(o.publicKey) : r.log.public_key;
      if (!key) throw new UsageError('--public-key is required');
      const entry = Buffer.from(r.log.entry_base64, 'base64');
      return verdict(await verifyTlogProof(r.tlog_proof, entry, key, r.log.origin), o.result);
    }));
  examples(c, [
    [`svc ${M} --json timestamp-proof q1… --plain-hex <sha256 of your file> > ts.json`],
    ['svc verify-log --result ts.json --public-key <node.public_key from the manifest>'],
  ]);
}

function addPulse(program: Command, settings: () => Settings, run: Runner): void {
  const c = program.command('pulse')
    .description('fetch a published pulse (latest, or by index) and verify it: signature, output_hash, and the'
      + ' link to the pulse before it')
    .addArgument(new Argument('[index]', 'pulse index, or latest').default('latest')
      .argParser((v) => (v === 'latest' ? v : String(nonNegativeInt('index')(v)))))
    .option('--node-key <b64url>', 'verify with this node public key (from the manifest; after a key rotation,'
      + ' comma-separated keys) instead of the key set sent')
    .action((index: string, o: { nodeKey?: string }) => run(() => fetchAndVerify(settings(), index, o.nodeKey)));
  examples(c, [
    ['svc pulse', 'the latest pulse, verified'],
    ['svc pulse 42 --json', 'as verify-pulse --pulse takes it'],
    ['svc pulse --node-key <node.public_key from the manifest>'],
  ]);
}

async function fetchAndVerify(s: Settings, index: string, nodeKey: string | undefined): Promise<Printable> {
  const { p, prev } = await session(s, async (c) => {
    const one = async (args: Record<string, unknown>) => publishedPulse(await c.request('PULSE', args));
    const got = await one(index === 'latest' ? {} : { index: Number(index) });
    const before = got.pulse.index > 0
      ? await one({ index: got.pulse.index - 1 }).catch((e: unknown) => {
        if (e instanceof ServiceError && e.code === 'not_found') return undefined;
        throw e;
      })
      : undefined;
    return { p: got, prev: before as SignedPulse | undefined };
  });
  // the key set the edge sent: the pulse before a key rotation names the retired key
  const key = nodeKey ? keyList(nodeKey) : p.node_keys ?? p.public_key;
  if (!key) throw new UsageError('the edge sent no public_key: give --node-key');
  const v = await verifyPublishedPulse(p, prev, key);
  if (!v.ok) {
    throw new VerificationError(`pulse ${p.pulse.index} did NOT verify: ${failedChecks(v.checks)}`, v.checks);
  }
  const linked = prev ? `, linked to pulse ${prev.pulse.index}` : '';
  const keyId = p.pulse.key_id; // the trusted key's: verified above
  const verdictText = `valid (key ${keyId}${linked})`;
  if (s.json) return { ...p, verified: true, key_id: keyId, checks: v.checks.map((c) => c.name) };
  return { ...p.pulse, output_hash: p.output_hash, signature: p.signature, [`pulse ${p.pulse.index}`]: verdictText };
}
