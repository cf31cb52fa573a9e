// Messages between svcd's primary and its gateway workers (node:cluster's IPC channel). A process that died a
// moment ago still looks connected until its end-of-file is read, and a message sent to it then fails
// (EPIPE); without a callback Node reports that as an 'error' event on the channel, which nobody hearing ends
// the sender. sendOrDrop gives the failure to a callback instead: the message is dropped, and the peer's exit
// or disconnect is handled where it is seen.

/** A worker (primary side) or `process` (worker side). */
export interface IpcChannel {
  send(message: unknown, handle: undefined, options: object, callback: (e: Error | null) => void): unknown;
}

/** Sends `message` if the channel still takes it; `done` gets the failure, or null once it was sent. */
export function sendOrDrop(channel: IpcChannel, message: unknown, done: (e: Error | null) => void = () => {}): void {
  channel.send(message, undefined, {}, done);
}
