// `svc login`: saves a node as a profile (profiles.ts) so later calls need no flags or exports: its edge
// address, the pin of the certificate it shows, and the machine id. Trust on first use, as ssh does:
// the node's HELLO must carry a valid edge proof naming the certificate this connection saw; then the
// pin is shown and, on a terminal, confirmed before anything is saved. A script passes --pin (checked
// against the node: nothing to ask) or --yes; without either and without a terminal, login refuses.
// Logging in again to the certificate already pinned asks nothing; to another one it warns.
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { verifyEdgeProof } from '../client/node-proofs.ts';
import { examples } from './conventions.ts';
import { CliFailure, HUMAN, UsageError, VerificationError, type Printable, type Runner } from './output.ts';
import { configPath, updateProfile } from './profiles.ts';
import { session } from './session.ts';
import { chosenProfile, resolveSetting, settingNamed, settingsOf, type Settings } from './settings.ts';

const WHERE_PIN = 'Compare it with "edge pin" in svcd\'s start-up banner (edge_cert_sha256 in its ready log,'
  + ' edge.cert_sha256 in the node\'s manifest).';

export function addLoginCommand(program: Command, run: Runner): void {
  const c = program.command('login')
    .description('save a node for later calls as a profile (--profile): its edge address, its certificate pin'
      + ' (shown for you to confirm) and your machine id')
    .option('--yes', 'trust the certificate the node shows without asking (scripts: check the pin it prints)')
    .action((o: { yes?: boolean }) => run(() => login(program, o.yes === true)));
  c.addHelpText('after', '\nThe edge and machine id: --edge and --machine-id (or SVC_EDGE, SVC_MACHINE_ID; else the'
    + '\nprofile\'s). The pin: the certificate the node shows, after its signed edge proof names it; asked'
    + '\nabout on a terminal. Not at a terminal: give --pin (checked against the node) or --yes.'
    + '\nSaved in $XDG_CONFIG_HOME/svc/config.json (else ~/.config/svc/config.json), mode 0600.');
  examples(c, [
    ['svc login --edge 127.0.0.1:9443 --machine-id my-agent', 'shows the node\'s pin and asks'],
    ['svc login --profile staging --edge staging.example:9443 --pin <edge_cert_sha256>', 'a pin you got elsewhere'],
    ['svc --profile staging balance', 'a call with that profile (or SVC_PROFILE=staging)'],
  ]);
}

interface Seen { pin: string; nodeId: string; keyId: string }

/** HELLO with a nonce of ours; the edge proof must verify and name the certificate this connection saw. */
async function meet(s: Settings, firstUse: boolean): Promise<Seen> {
  const nonce = randomBytes(16).toString('base64url');
  const { reply, cert } = await session(s, async (c) => {
    const r = await c.request('HELLO', { nonce });
    return { reply: r, cert: c.peerCertificateSha256 };
  }, { firstUse });
  const v = verifyEdgeProof(reply, { nonce, certSha256: cert ?? '' });
  if (!v.ok || !cert) {
    throw new VerificationError('the node\'s edge proof did not verify: nothing saved', v.checks);
  }
  return { pin: cert, nodeId: String(reply.node_id), keyId: v.key_id };
}

async function login(root: Command, yes: boolean): Promise<Printable> {
  const s = settingsOf(root, true);
  if (s.ca !== undefined || s.insecure) {
    throw new UsageError('login saves a pin: leave out --ca and --insecure (a CA-issued edge needs no login:'
      + ' svc config set edge <host:port>)');
  }
  const { name, profile } = chosenProfile(root, true);
  const given = resolveSetting(settingNamed('pin'), root, undefined, name).value;
  const seen = await meet({ ...s, pin: given }, given === undefined);
  const changed = profile?.pin !== undefined && profile.pin !== seen.pin;
  const ask = given === undefined && !yes && profile?.pin !== seen.pin;
  if (ask || changed || (!s.json && given === undefined)) showNode(s, seen, name, changed ? profile?.pin : undefined);
  if (ask) {
    if (!process.stdin.isTTY || !process.stderr.isTTY) {
      throw new UsageError('login asks you to confirm the node\'s pin, and this is no terminal: give --pin <sha256>'
        + ' (the pin you got from the node\'s operator) or --yes (trust on first use)');
    }
    if (!await confirm(`Trust this certificate and save it as profile "${name}"? [y/N] `)) {
      throw new CliFailure('not_confirmed', 'nothing saved: the certificate was not confirmed');
    }
  }
  updateProfile(name, (p) => ({
    ...p, edge: s.edge, pin: seen.pin, node_id: seen.nodeId, ...(s.machineId ? { machine_id: s.machineId } : {}),
  }));
  return saved(name, s, seen);
}

function showNode(s: Settings, seen: Seen, name: string, previous: string | undefined): void {
  const lines = [
    `node ${seen.nodeId} at ${s.edge}: edge proof valid (key ${seen.keyId}), signed for this certificate:`,
    `  pin (SHA-256)  ${seen.pin}`,
    WHERE_PIN,
  ];
  if (previous) {
    lines.push(`WARNING: profile "${name}" pinned another certificate, ${previous}. The node's certificate`
      + ' changed (a new data dir, a new certificate) or something is in between: check before you trust it.');
  }
  process.stderr.write(`${lines.join('\n')}\n`);
}

function saved(name: string, s: Settings, seen: Seen): Printable {
  const path = configPath();
  const text = [
    `logged in: profile "${name}" saved in ${path}`,
    `  edge        ${s.edge}`,
    `  pin         ${seen.pin}`,
    `  machine-id  ${s.machineId ?? '(none: svc config set machine-id <id>)'}`,
    `  node        ${seen.nodeId}`,
  ].join('\n');
  return {
    profile: name, edge: s.edge, pin: seen.pin, machine_id: s.machineId ?? null, node_id: seen.nodeId,
    config_file: path, [HUMAN]: text,
  };
}

/** One yes/no question on the terminal; end of input is no. (The terminal edits and echoes the line itself.) */
function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: false });
  return new Promise((resolve) => {
    let answered = false;
    rl.on('close', () => { if (!answered) resolve(false); });
    rl.question(question, (a) => {
      answered = true;
      rl.close();
      resolve(/^y(es)?$/i.test(a.trim()));
    });
  });
}
