// svc/1 framing (DESIGN.md §2): one UTF-8 JSON object per '\n'-terminated line, at most 1 MiB. An
// unfinished line is held up to MAX_LINE and what a shared budget grants, never handed on half;
// lines are split one at a time as asked, so input waiting behind backpressure stays bytes.
import type { Budget } from './budgets.ts';

export const MAX_LINE = 1 << 20;

// The unfinished line is held in blocks that double from 1 KiB to 64 KiB and are never copied as it
// grows: the bytes held are what the budget was charged (no garbage from regrowth), and a peer
// sending one byte at a time costs bytes, not an object per byte.
const FIRST_BLOCK = 1024;
const LARGEST_BLOCK = 64 * 1024;

export interface PushResult {
  lines: string[];
  /** the unfinished line passed the line limit: the caller must close the connection */
  overflow: boolean;
  /** the budget refused the bytes to hold the unfinished line: the caller must close the connection */
  overBudget?: true;
}

/** What nextLine gives: a line, nothing more for now (null), or why the connection must close. */
export type NextLine = { line: string } | { fault: 'line_too_long' | 'over_budget' } | null;

export class LineDecoder {
  readonly #max: number;
  readonly #budget: Budget | null;
  #input: Buffer[] = []; // chunks fed and not yet split; #at is the read position in the first
  #at = 0;
  #blocks: Buffer[] = []; // the unfinished line
  #held = 0; // bytes in #blocks
  #len = 0; // bytes of the unfinished line in them

  constructor(max = MAX_LINE, budget: Budget | null = null) {
    this.#max = max;
    this.#budget = budget;
  }

  /** Bytes of the unfinished line held so far. */
  get pending(): number { return this.#len; }

  /** Bytes allocated for the unfinished line (what the budget is charged). */
  get held(): number { return this.#held; }

  /** Whether input fed is waiting to be split by nextLine. */
  get hasInput(): boolean { return this.#input.length > 0; }

  /** Queues a chunk for nextLine. The chunk is kept, not copied, until it is split. */
  feed(chunk: Buffer): void {
    if (chunk.length) this.#input.push(chunk);
  }

  /**
   * The next complete line fed (without '\n', '\r\n' tolerated); null when the input is used up
   * (its unfinished tail is then held); or a fault after which the caller must close.
   */
  nextLine(): NextLine {
    while (this.#input.length) {
      const chunk = this.#input[0]!;
      const nl = chunk.indexOf(0x0a, this.#at);
      const piece = chunk.subarray(this.#at, nl < 0 ? chunk.length : nl);
      this.#at += piece.length + (nl < 0 ? 0 : 1);
      if (this.#at >= chunk.length) { this.#input.shift(); this.#at = 0; }
      if (this.#len + piece.length > this.#max) return { fault: 'line_too_long' };
      if (nl < 0) {
        if (!this.#hold(piece)) return { fault: 'over_budget' };
        continue;
      }
      const whole = this.#len ? Buffer.concat([...this.#parts(), piece], this.#len + piece.length) : piece;
      this.#release();
      const end = whole.length && whole[whole.length - 1] === 0x0d ? whole.length - 1 : whole.length;
      return { line: whole.toString('utf8', 0, end) };
    }
    return null;
  }

  /**
   * Feeds a chunk and splits all of it: the complete lines, and whether the unfinished line passed
   * the limit or the budget (the caller must then close). For readers without backpressure.
   */
  push(chunk: Buffer): PushResult {
    this.feed(chunk);
    const lines: string[] = [];
    for (;;) {
      const next = this.nextLine();
      if (next === null) return { lines, overflow: false };
      if ('fault' in next) {
        if (next.fault === 'line_too_long') return { lines, overflow: true };
        return { lines, overflow: false, overBudget: true };
      }
      lines.push(next.line);
    }
  }

  /** Drops all input and the unfinished line, and returns its bytes to the budget (call on close). */
  dispose(): void {
    this.#input = [];
    this.#at = 0;
    this.#release();
  }

  #release(): void {
    this.#budget?.release(this.#held);
    this.#blocks = [];
    this.#held = 0;
    this.#len = 0;
  }

  /** The unfinished line's bytes, block by block. */
  #parts(): Buffer[] {
    const parts = this.#blocks.slice();
    const last = parts.length - 1;
    parts[last] = parts[last]!.subarray(0, this.#len - (this.#held - parts[last]!.length));
    return parts;
  }

  /** Appends to the unfinished line, adding blocks as far as the budget allows. */
  #hold(bytes: Buffer): boolean {
    let at = 0;
    while (at < bytes.length) {
      let block = this.#blocks[this.#blocks.length - 1];
      let used = block ? block.length - (this.#held - this.#len) : 0;
      if (!block || used === block.length) {
        const size = Math.min(LARGEST_BLOCK, Math.max(FIRST_BLOCK, this.#held), this.#max - this.#held);
        if (this.#budget && !this.#budget.tryTake(size)) return false;
        block = Buffer.allocUnsafeSlow(size); // not from the shared pool: a small slice would pin a whole slab
        this.#blocks.push(block);
        this.#held += size;
        used = 0;
      }
      const n = bytes.copy(block, used, at);
      at += n;
      this.#len += n;
    }
    return true;
  }
}

export function encodeLine(frame: unknown): string {
  return JSON.stringify(frame) + '\n';
}

/** What lineWriter needs of a socket (net.Socket and tls.TLSSocket both are). */
export interface CorkableSocket {
  cork(): void;
  uncork(): void;
  write(chunk: string): boolean;
}

/**
 * Writes lines to `socket`, every line written before the event loop's next check phase in one write:
 * the first line of a turn corks the socket and a setImmediate uncorks it. Replies that a group commit
 * releases together, and requests that one poll of the HTTP sockets starts together, then cost one
 * system call (about 25–45 µs of kernel time each on loopback) instead of one each.
 */
export function lineWriter(socket: CorkableSocket): (line: string) => void {
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  return (line) => {
    if (!corked) {
      corked = true;
      socket.cork();
      setImmediate(uncork);
    }
    socket.write(line);
  };
}
