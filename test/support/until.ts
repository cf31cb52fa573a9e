// Waiting for a state, never for a time: polls `probe` until it answers something truthy and returns
// that, or throws naming what did not happen once the deadline has passed. The deadline is generous
// (the machine is shared and loaded): it only stops a test that would otherwise hang, it is not a
// timed assertion.

export interface UntilOptions {
  /** give up after this many ms (default 30 s) */
  ms?: number;
  /** pause between probes (default 20 ms; probes that make a request deserve 100 or more) */
  every?: number;
}

type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

export async function until<T>(
  what: string, probe: () => T | Promise<T>, { ms = 30_000, every = 20 }: UntilOptions = {},
): Promise<Truthy<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v as Truthy<T>;
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, every));
  }
}
