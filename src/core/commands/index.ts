// The command table: each registry command's handler, found by name. The handlers live with their
// group; this module joins the groups and refuses to load when the table and the registry disagree
// (a command without a handler, a handler for no command, a name in two groups).
import { ALL_COMMANDS } from '../../protocol/registry.ts';
import type { Handler } from '../call.ts';
import { ADMIN_COMMANDS } from './admin.ts';
import { MONEY_COMMANDS } from './money.ts';
import { NODE_COMMANDS } from './node-info.ts';
import { PROOF_COMMANDS } from './proofs.ts';
import { SANDBOX_COMMANDS } from './sandbox.ts';

const GROUPS = [NODE_COMMANDS, MONEY_COMMANDS, PROOF_COMMANDS, SANDBOX_COMMANDS, ADMIN_COMMANDS];

/** The table, checked against the registry (exported for the test that says how it fails). */
export function commandTable(
  groups: readonly Record<string, Handler>[], names: readonly string[],
): Map<string, Handler> {
  const table = new Map<string, Handler>();
  for (const [name, handler] of groups.flatMap((g) => Object.entries(g))) {
    if (table.has(name)) throw new Error(`command ${name} has two handlers`);
    table.set(name, handler);
  }
  const missing = names.filter((n) => !table.has(n));
  const extra = [...table.keys()].filter((n) => !names.includes(n));
  if (missing.length || extra.length) {
    throw new Error(`command table and registry differ: no handler for [${missing.join(', ')}], `
      + `no command for [${extra.join(', ')}]`);
  }
  return table;
}

export const HANDLERS: ReadonlyMap<string, Handler> = commandTable(GROUPS, ALL_COMMANDS.map((c) => c.name));
