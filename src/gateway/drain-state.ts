// What the gateway knows of its own drain (SIGTERM; http-server.ts drives it): whether it is
// draining, which connections came too late to be served, the requests still in flight, and how
// many were served and refused since the drain began.
import type { Socket } from 'node:net';

export class DrainState {
  #draining = false;
  #late: (socket: Socket) => boolean = () => false;
  #inFlight = 0;
  #idle: (() => void) | null = null;
  readonly #counts = { served: 0, refused: 0 };

  get draining(): boolean { return this.#draining; }

  /** Draining from now on; requests on connections `late` names are refused (refuse()). */
  start(late: (socket: Socket) => boolean): void {
    this.#draining = true;
    this.#late = late;
  }

  /** Whether a request on this connection is to be refused: draining, and the connection came late. */
  isLate(socket: Socket): boolean {
    return this.#draining && this.#late(socket);
  }

  refused(): void { this.#counts.refused++; }

  /** A request begins; the function returned (one for all requests) ends it once its response is out. */
  begin(): () => void {
    this.#inFlight++;
    return this.#end;
  }

  readonly #end = (): void => {
    this.#inFlight--;
    if (!this.#draining) return;
    this.#counts.served++;
    if (this.#inFlight === 0) this.#idle?.();
  };

  counts(): { served: number; refused: number } { return { ...this.#counts }; }

  /** Resolves once no request is in flight, or after `timeoutMs`: whether it drained. */
  drained(timeoutMs: number): Promise<boolean> {
    if (this.#inFlight === 0) return Promise.resolve(true);
    return new Promise<boolean>((r) => {
      const timer = setTimeout(() => r(false), timeoutMs);
      timer.unref();
      this.#idle = () => { clearTimeout(timer); r(true); };
    });
  }
}
