// svc/1 framing (DESIGN.md §2): one UTF-8 JSON object per '\n'-terminated line, at most 1 MiB per
// line. The decoder never holds more than MAX_LINE bytes of an unfinished line, so a peer that
// never sends '\n' cannot grow memory; a half-written line never reaches a handler.

export const MAX_LINE = 1 << 20;

export class LineDecoder {
  readonly #max: number;
  #parts: Buffer[] = [];
  #len = 0;

  constructor(max = MAX_LINE) {
    this.#max = max;
  }

  /** Bytes of the unfinished line held so far. */
  get pending(): number { return this.#len; }

  /**
   * Feeds a chunk; returns the complete lines it finished (without '\n', '\r\n' tolerated) and
   * whether the current line passed the limit (the caller must then close the connection).
   */
  push(chunk: Buffer): { lines: string[]; overflow: boolean } {
    const lines: string[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl < 0) break;
      const piece = chunk.subarray(start, nl);
      if (this.#len + piece.length > this.#max) return { lines, overflow: true };
      const whole = this.#len ? Buffer.concat([...this.#parts, piece], this.#len + piece.length) : piece;
      this.#parts = []; this.#len = 0;
      const end = whole.length && whole[whole.length - 1] === 0x0d ? whole.length - 1 : whole.length;
      lines.push(whole.toString('utf8', 0, end));
      start = nl + 1;
    }
    const rest = chunk.subarray(start);
    if (rest.length) {
      if (this.#len + rest.length > this.#max) return { lines, overflow: true };
      this.#parts.push(Buffer.from(rest)); // copy: the socket may reuse its buffer
      this.#len += rest.length;
    }
    return { lines, overflow: false };
  }
}

export function encodeLine(frame: unknown): string {
  return JSON.stringify(frame) + '\n';
}
