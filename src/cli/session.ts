// How `svc` reaches a node: the settings (settings.ts) as an endpoint, one connection per command,
// a request id of its own on every request (a UUID as the svc/1 frame id: the reply answers with it,
// the CLI prints it with any error, and the node's log line for a fault carries it), and under
// --verbose the wire log (wire-log.ts).
import { randomUUID } from 'node:crypto';
import { ConnectionError, SvcClient, parseHostPort, type Auth, type Endpoint } from '../client/client.ts';
import type { FrameId } from '../protocol/wire.ts';
import { tokenFor } from './credentials.ts';
import { LostRequest, StepFailed, UsageError } from './output.ts';
import type { Settings } from './settings.ts';
import { wireLog } from './wire-log.ts';

/**
 * The edge as the settings say. `firstUse`: accept whatever certificate the edge shows, without the
 * --insecure warning, because the caller shows its pin and asks (svc login).
 */
export function endpoint(s: Settings, firstUse = false): Endpoint {
  let hp;
  try { hp = parseHostPort(s.edge, 9443); } catch (e) { throw new UsageError((e as Error).message); }
  if (firstUse) return { kind: 'tls', host: hp.host, port: hp.port, insecure: true };
  if (s.insecure) {
    process.stderr.write('WARNING: --insecure: the edge certificate is NOT verified;'
      + ' anyone on the path can read and change this traffic. Use --pin or --ca.\n');
  }
  return { kind: 'tls', host: hp.host, port: hp.port, pin: s.pin, ca: s.ca, insecure: s.insecure };
}

function trustOf(ep: Endpoint): string {
  if (ep.kind !== 'tls') return ep.kind;
  if (ep.pin) return `TLS, pinned ${ep.pin}`;
  if (ep.ca) return `TLS, CA ${ep.ca}`;
  return ep.insecure ? 'TLS, certificate not checked' : 'TLS, the system\'s CAs';
}

/** Opens one connection to the edge for `fn`, and closes it. */
export async function session<T>(
  s: Settings, fn: (c: SvcClient) => Promise<T>, opts: { firstUse?: boolean } = {},
): Promise<T> {
  const log = s.verbose ? wireLog() : undefined;
  const inFlight = new Set<FrameId>();
  const ep = endpoint(s, opts.firstUse);
  log?.note(`connecting to ${s.edge} (${trustOf(ep)})`);
  const client = await SvcClient.connect(ep, s.timeoutMs, {
    frameId: randomUUID,
    onFrame: (direction, frame) => {
      const id = frame.id as FrameId;
      if (direction === 'sent') inFlight.add(id); else inFlight.delete(id);
      log?.frame(direction, frame);
    },
  });
  log?.note(`connected: edge certificate sha256 ${client.peerCertificateSha256 ?? '?'}`);
  try {
    return await fn(client);
  } catch (e) {
    throw lostIn(e, [...inFlight][0]);
  } finally {
    client.close();
  }
}

/** A connection lost with a request unanswered names that request (also inside a failed step). */
function lostIn(e: unknown, unanswered: FrameId | undefined): unknown {
  if (unanswered === undefined) return e;
  if (e instanceof ConnectionError && e.sent) return new LostRequest(e, String(unanswered));
  if (e instanceof StepFailed) {
    const inner = lostIn(e.failure, unanswered);
    return inner === e.failure ? e : new StepFailed(e.step, inner, e.about);
  }
  return e;
}

/** A machine's auth: its id, and its token (SVC_MACHINE_TOKEN, else the credentials file). */
export function authFor(s: Settings, machineId: string | undefined): Auth {
  return { machine_id: machineId, token: tokenFor(machineId, s.credentials) };
}

/** One command on its own connection; `auth`: send the machine's token. */
export function call(
  s: Settings, cmd: string, args: Record<string, unknown>, opts: { auth?: boolean } = {},
): Promise<Record<string, unknown>> {
  const auth = opts.auth ? authFor(s, args.machine_id as string | undefined) : undefined;
  return session(s, (c) => c.request(cmd, args, auth));
}
