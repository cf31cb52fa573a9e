// `svc --verbose`: what went over the wire, on stderr, as curl -v shows it: `*` for the connection,
// `>` for each request frame sent and `<` for each reply, one JSON line each. A verbose log ends up
// pasted into issues and chats, so every token in it (the request's auth token, a machine_token an
// invoice returns) is replaced before it is printed.
const REDACTED = '[redacted]';

/** A key whose value is a secret: `token`, `machine_token`, any `…_token`. */
const SECRET = /(^|_)token$/i;

/** A copy of `v` with every secret value replaced. */
export function redacted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(redacted);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [
    k, SECRET.test(k) && typeof x === 'string' ? REDACTED : redacted(x),
  ]));
}

export interface WireLog {
  note(text: string): void;
  frame(direction: 'sent' | 'received', frame: Readonly<Record<string, unknown>>): void;
}

export function wireLog(write: (line: string) => void = (l) => process.stderr.write(l)): WireLog {
  return {
    note: (text) => write(`* ${text}\n`),
    frame: (direction, frame) => write(`${direction === 'sent' ? '>' : '<'} ${JSON.stringify(redacted(frame))}\n`),
  };
}
