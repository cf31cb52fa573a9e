// The values the configuration reads from the environment, checked the one way every setting is (config.ts and
// the settings of its own modules, such as x402/config.ts): a bad value stops svcd naming its variable.
import type { Finality } from './finality.ts';

/** An integer variable in min..max, or `def` when unset or empty. */
export function envInt(env: NodeJS.ProcessEnv, name: string, def: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  // digits as written: Number() would take ' ' for 0, ' 80' for 80, '0x10' and '1e3'
  const v = /^-?[0-9]{1,16}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(v) || v < min || v > max) {
    throw new Error(`${name} must be an integer in ${min}..${max} (got ${JSON.stringify(raw)})`);
  }
  return v;
}

/** An EVM address: 0x and 40 hex digits (any case). */
export const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** The heads an EVM chain's JSON-RPC names (TRON's knows no `safe`). */
export const EVM_FINALITIES: readonly Finality[] = ['finalized', 'safe', 'latest'];
