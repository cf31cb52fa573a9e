// Named profiles: what `svc login` (or `svc config set`) saved for a node, so later calls need no flags
// or exports: the edge address, the edge certificate's pin and the machine id, in config.json in the
// config dir (user-files.ts: mode 0600, safe against concurrent writes). Which profile a call uses is
// --profile, else SVC_PROFILE, else "default"; how its values rank against flags and the environment
// is settings.ts.
import { join } from 'node:path';
import { configDir, readJsonFile, updateJsonFile } from './user-files.ts';

export interface Profile {
  edge?: string;
  pin?: string;
  machine_id?: string;
  /** the node that answered at login (informational: its id names its first key) */
  node_id?: string;
  saved_at?: string;
}

interface ConfigFile { profiles: Record<string, Profile> }

export const DEFAULT_PROFILE = 'default';
/** A profile name: something a person types, and a JSON key that cannot surprise (no __proto__). */
export const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export function configPath(): string {
  return join(configDir(), 'config.json');
}

const empty = (): ConfigFile => ({ profiles: {} });

export function profileNamed(name: string, path = configPath()): Profile | undefined {
  const profiles = readJsonFile(path, empty()).profiles;
  return Object.hasOwn(profiles, name) ? profiles[name] : undefined;
}

export function profileNames(path = configPath()): string[] {
  return Object.keys(readJsonFile(path, empty()).profiles).sort();
}

/** Changes one profile (made when absent); `change` returning undefined deletes it. */
export function updateProfile(
  name: string, change: (p: Profile) => Profile | undefined, path = configPath(),
): void {
  updateJsonFile(path, empty(), (f) => {
    const next = change({ ...(Object.hasOwn(f.profiles, name) ? f.profiles[name] : {}) });
    if (next === undefined) delete f.profiles[name];
    else f.profiles[name] = { ...next, saved_at: new Date().toISOString() };
  });
}
