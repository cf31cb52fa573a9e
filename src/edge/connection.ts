// One svc/1 connection, whatever the transport (TLS edge, loopback backend, admin unix socket):
// framing, pipelining with a bounded number of requests in flight (past it the socket is paused:
// backpressure, not buffering; reading also stops while replies wait for a peer that does not
// read them, and what was read stays bytes until it can be dispatched), replies in completion
// order, an idle timeout and a deadline for a started line (a slow writer cannot hold a
// connection with half a line), error frames for every bad line, and a close after an oversized
// line or when the shared budget for unfinished lines is spent. And shutdown without a reset: a
// draining connection sends a `shutting_down` notice (id null), answers lines that arrive after it
// with that error unrun, finishes what it runs, and closes once nothing is in flight and the peer
// has closed its side (a client that heeds the notice does at once) or been quiet for a moment.
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { ServiceError, exposeError, isFault, unavailableCause } from '../errors.ts';
import type { AddressedBudget } from '../protocol/budgets.ts';
import { LineDecoder, MAX_LINE, encodeLine, lineWriter } from '../protocol/line-codec.ts';
import { parseRequest, type FrameId, type ReplyFrame, type RequestFrame } from '../protocol/wire.ts';
import type { Listener } from '../core/call.ts';
import type { Core } from '../core/core.ts';
import { commandDone } from '../core/core-metrics.ts';

export interface ConnectionOptions {
  listener: Listener;
  maxInFlight: number;
  idleTimeoutMs: number;
  lineTimeoutMs: number;
  /**
   * shared by the connections of a listener, each client address holding at most its share; none:
   * only the per-line limit applies
   */
  lineBudget: AddressedBudget | null;
  log: Logger;
}

/** How long a connection being closed for a protocol error keeps draining the peer's bytes. */
const LINGER_MS = 30_000;
/** Draining: how long a connection with nothing in flight waits for its peer to close before it closes. */
const QUIET_MS = 500;
/** How late past a frame's deadline it is still run: clocks of two hosts may differ by this much. */
const DEADLINE_SLACK_MS = 250;

/** A served connection, for the listener's shutdown. */
export interface Served {
  /** Stops running new lines (each is answered shutting_down) and closes once quiet; see the header. */
  drain(): void;
}

const SHUTTING_DOWN = 'this node is shutting down and did not run the request; send it again (another node, or later)';

/**
 * A connection refused over a cap (protocol/admission.ts): one `busy` frame (`message` says which cap
 * and when to retry), then a lingering close.
 */
export function refuseConnection(socket: Socket, message: string): void {
  socket.on('error', () => { /* peer reset: nothing to answer */ });
  socket.end(encodeLine({ id: null, ok: false, error: new ServiceError('busy', message).toWire() }));
  socket.resume(); // read and drop what the peer sends, so unread bytes do not turn the close into a reset
  socket.once('end', () => socket.destroy());
  setTimeout(() => socket.destroy(), 5000).unref();
}

export function serveConnection(socket: Socket, core: Core, opts: ConnectionOptions): Served {
  const share = opts.lineBudget?.share(socket.remoteAddress ?? 'unknown') ?? null;
  const decoder = new LineDecoder(MAX_LINE, share);
  let inFlight = 0;
  let closing = false;
  let draining = false;
  let peerEnded = false;
  let quietTimer: NodeJS.Timeout | null = null;
  let lineTimer: NodeJS.Timeout | null = null;
  const remote = `${socket.remoteAddress ?? 'local'}:${socket.remotePort ?? ''}`;

  const write = lineWriter(socket);
  const send = (frame: ReplyFrame) => {
    if (!socket.destroyed && socket.writable) write(encodeLine(frame));
  };
  const fail = (id: FrameId | null, e: unknown) => {
    const wire = exposeError(e);
    if (isFault(e)) {
      // the frame id: a client that sends ids of its own (svc prints it with the error) names this line
      opts.log.error({ err: e, remote, listener: opts.listener, request_id: id }, 'request failed');
    } else if (unavailableCause(e) !== undefined) {
      opts.log.warn({ err: unavailableCause(e), listener: opts.listener, request_id: id }, wire.message);
    }
    send({ id, ok: false, error: wire });
  };
  const closeAfterFlush = (id: FrameId | null, e: ServiceError) => {
    closing = true;
    decoder.dispose(); // what it held goes back to the budget now, not when the peer lets go
    fail(id, e);
    // lingering close: half-close and keep draining what the peer is still sending, so the kernel
    // does not answer unread data with a reset that could destroy the error frame in flight
    socket.end();
    socket.resume(); // drain even if backpressure had paused reading: 'data' now discards
    socket.once('end', () => socket.destroy()); // the peer finished sending: nothing left to drain
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  };
  const refuse = (fault: 'line_too_long' | 'over_budget') => {
    if (fault === 'line_too_long') {
      closeAfterFlush(null, new ServiceError('line_too_long', `a line exceeded ${MAX_LINE} bytes; closing`));
      return;
    }
    const message = share?.refused === 'address'
      ? `this client address holds its share of unfinished lines (${share.perAddress} bytes); retry later`
      : `the server holds its limit of unfinished lines (${share?.limit} bytes); retry later`;
    closeAfterFlush(null, new ServiceError('busy', message));
  };

  socket.setNoDelay(true);
  socket.setTimeout(opts.idleTimeoutMs, () => socket.destroy());
  socket.on('error', () => { /* peer reset: nothing to answer */ });
  socket.on('close', () => {
    if (lineTimer) clearTimeout(lineTimer);
    if (quietTimer) clearTimeout(quietTimer);
    decoder.dispose();
  });
  socket.on('end', () => {
    peerEnded = true;
    if (draining) closeWhenQuiet();
  });
  socket.on('drain', () => pump());
  socket.on('data', (chunk: Buffer) => {
    if (closing) return;
    decoder.feed(chunk);
    pump();
  });

  // replies the peer has not taken yet count as work in flight: no new lines until they drain
  const blocked = () => inFlight >= opts.maxInFlight || socket.writableNeedDrain;

  /** Dispatches the lines read while there is room; stops reading while there is none. */
  function pump(): void {
    while (!closing && !blocked()) {
      const next = decoder.nextLine();
      if (next === null) break;
      if ('fault' in next) { refuse(next.fault); return; }
      handleLine(next.line);
    }
    if (closing) return;
    if (blocked() || decoder.hasInput) { if (!socket.isPaused()) socket.pause(); }
    else if (socket.isPaused()) socket.resume();
    watchLineDeadline();
    if (draining) closeWhenQuiet();
  }

  /**
   * Draining: closes once nothing runs and nothing is half read, when the peer has closed its side, or
   * after QUIET_MS without a line (a peer that ignores the notice).
   */
  function closeWhenQuiet(): void {
    if (quietTimer) clearTimeout(quietTimer);
    quietTimer = null;
    if (closing || inFlight > 0 || decoder.pending > 0 || decoder.hasInput || socket.writableNeedDrain) return;
    if (peerEnded) {
      closing = true;
      socket.end();
      return;
    }
    quietTimer = setTimeout(() => {
      closing = true;
      socket.end();
      socket.resume();
      socket.once('end', () => socket.destroy());
      setTimeout(() => socket.destroy(), LINGER_MS).unref();
    }, QUIET_MS);
    quietTimer.unref();
  }

  /** A started line must end within lineTimeoutMs, or the connection is closed. */
  function watchLineDeadline(): void {
    if (decoder.pending > 0 && !lineTimer) {
      const message = `no end of line within ${opts.lineTimeoutMs} ms; closing`;
      const cut = () => closeAfterFlush(null, new ServiceError('bad_frame', message));
      lineTimer = setTimeout(cut, opts.lineTimeoutMs);
      lineTimer.unref();
    } else if (decoder.pending === 0 && lineTimer) {
      clearTimeout(lineTimer);
      lineTimer = null;
    }
  }

  function handleLine(line: string): void {
    if (!line.trim()) return; // blank lines are keep-alives
    const parsed = parseRequest(line);
    if (!parsed.ok) { fail(parsed.id, parsed.error); return; }
    const { req } = parsed;
    if (draining) {
      fail(req.id, new ServiceError('shutting_down', SHUTTING_DOWN));
      return;
    }
    if (req.via && opts.listener !== 'backend') {
      fail(req.id, new ServiceError('bad_frame', 'via is accepted on the backend listener only'));
      return;
    }
    // read after its sender stopped waiting (this node was stopped or cut off meanwhile): nobody would hear
    // the answer, and a retry may have gone elsewhere; refused unrun (a little slack for clocks apart)
    if (req.deadline !== undefined && Date.now() > req.deadline + DEADLINE_SLACK_MS) {
      commandDone(req.cmd, opts.listener, 'cancelled', performance.now());
      const late = `read ${Date.now() - req.deadline} ms after its sender's deadline; not run`;
      fail(req.id, new ServiceError('cancelled', late, { not_run: true }));
      return;
    }
    // the gateway (backend) names its HTTP client, or no one for its own calls; everyone else is who
    // the socket says
    const client = opts.listener === 'backend' ? req.via?.client : socket.remoteAddress ?? 'local';
    inFlight++;
    void answer(req, client);
  }

  /** One request's reply (a function of its own, not closures built for every line). */
  async function answer(req: RequestFrame, client: string | undefined): Promise<void> {
    try {
      send({ id: req.id, ok: true, result: await core.handle(req.cmd, req.args, req.auth, opts.listener, client) });
    } catch (e) {
      fail(req.id, e);
    } finally {
      inFlight--;
      pump();
    }
  }

  return {
    drain() {
      if (draining || closing) return;
      draining = true;
      send({ id: null, ok: false, error: new ServiceError('shutting_down', SHUTTING_DOWN).toWire() });
      pump();
      closeWhenQuiet();
    },
  };
}
