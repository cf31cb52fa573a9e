// How the gateway's parts reach the core: one function over the client kit (app.ts owns the
// connections), and the edge's health as every status surface reports it.

export type CoreCall = (cmd: string, args: Record<string, unknown>) => Promise<Record<string, unknown>>;

/** HEALTH via the edge, or `unavailable` with the reason: status pages never fail because the core did. */
export async function edgeStatus(core: CoreCall): Promise<Record<string, unknown>> {
  try {
    return { status: 'ok', ...(await core('HEALTH', {})) };
  } catch (e) {
    return { status: 'unavailable', reason: e instanceof Error ? e.message : String(e) };
  }
}
