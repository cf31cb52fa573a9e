// What a `svc` call uses for each setting, and where that came from: the flag, else its environment
// variable, else the profile's value (profiles.ts), else the default. One table (SETTINGS) gives the
// global flags, their variables, `svc config get|set|list` and this order. The certificate is trusted
// one way: --ca or --insecure on the command line set aside a pin from the environment or the profile.
import { Option, type Command } from 'commander';
import { normalizeFingerprint, parseHostPort } from '../client/client.ts';
import { credentialsPath } from './credentials.ts';
import { UsageError } from './output.ts';
import { DEFAULT_PROFILE, PROFILE_NAME, configPath, profileNamed, type Profile } from './profiles.ts';

export interface SettingSpec {
  /** its name in `svc config` (the flag without its dashes) */
  key: 'edge' | 'pin' | 'machine-id';
  /** its field in a profile */
  field: 'edge' | 'pin' | 'machine_id';
  /** commander's name for the flag's value */
  attr: 'edge' | 'pin' | 'machineId';
  env: string;
  value: string;
  about: string;
  fallback?: string;
  /** the value as saved (normalised), or a UsageError naming what is wrong */
  check(v: string): string;
}

function checkEdge(v: string): string {
  try { parseHostPort(v, 9443); } catch (e) { throw new UsageError((e as Error).message); }
  return v;
}

function checkPin(v: string): string {
  const pin = normalizeFingerprint(v);
  if (!/^[0-9a-f]{64}$/.test(pin)) throw new UsageError('a pin is a SHA-256: 64 hex digits (colons allowed)');
  return pin;
}

function checkMachine(v: string): string {
  // the contract's machine_id: 1..128 characters (the node checks the rest)
  if (v.length < 1 || v.length > 128) throw new UsageError('a machine id is 1..128 characters');
  return v;
}

export const SETTINGS: readonly SettingSpec[] = [
  {
    key: 'edge', field: 'edge', attr: 'edge', env: 'SVC_EDGE', value: '<host:port>', fallback: '127.0.0.1:9443',
    about: 'the node\'s edge address', check: checkEdge,
  },
  {
    key: 'pin', field: 'pin', attr: 'pin', env: 'SVC_EDGE_PIN', value: '<sha256>',
    about: 'pin the edge certificate by its SHA-256 fingerprint (hex, colons allowed)', check: checkPin,
  },
  {
    key: 'machine-id', field: 'machine_id', attr: 'machineId', env: 'SVC_MACHINE_ID', value: '<id>',
    about: 'your machine_id', check: checkMachine,
  },
];

export const settingNamed = (key: string) => SETTINGS.find((s) => s.key === key)!;

/**
 * The global options that SETTINGS and the profile make: help shows each variable's name (env: …),
 * never its value, and the default as written here, so nothing from the environment is printed.
 */
export function settingOptions(program: Command): void {
  program.addOption(new Option('--profile <name>', `the saved profile to use (svc login; default "${
    DEFAULT_PROFILE}")`).env('SVC_PROFILE'));
  for (const s of SETTINGS) {
    const fallback = s.fallback ? `; default ${s.fallback}` : '';
    program.addOption(new Option(`--${s.key} ${s.value}`, `${s.about} (else the profile's${fallback})`).env(s.env));
  }
}

export type Source = 'flag' | 'env' | 'profile' | 'default';
export interface Resolved { value?: string; source?: Source; from: string }

/** Which profile: --profile, else SVC_PROFILE, else "default" (`explicit`: named by the user). */
export function profileChoice(root: Command): { name: string; explicit: boolean } {
  const given = fromCommandLine(root, 'profile');
  if (!given) return { name: DEFAULT_PROFILE, explicit: false };
  if (!PROFILE_NAME.test(given.value)) {
    throw new UsageError('a profile name is 1..64 of A-Z a-z 0-9 _ . - (a letter or digit first)');
  }
  return { name: given.value, explicit: true };
}

/** A flag's value and whether it was typed (flag) or read from its variable (env); an empty value is none. */
function fromCommandLine(root: Command, attr: string): { value: string; source: 'flag' | 'env' } | undefined {
  const value = root.getOptionValue(attr) as string | undefined;
  const src = root.getOptionValueSource(attr);
  if (!value || (src !== 'cli' && src !== 'env')) return undefined;
  return { value, source: src === 'cli' ? 'flag' : 'env' };
}

/** One setting: flag > env > profile > default. */
export function resolveSetting(s: SettingSpec, root: Command, profile: Profile | undefined, name: string): Resolved {
  const given = fromCommandLine(root, s.attr);
  if (given) {
    const from = given.source === 'flag' ? `flag --${s.key}` : `env ${s.env}`;
    return { value: given.value, source: given.source, from };
  }
  const saved = profile?.[s.field];
  if (saved) return { value: saved, source: 'profile', from: `profile "${name}"` };
  if (s.fallback) return { value: s.fallback, source: 'default', from: 'default' };
  return { from: 'not set' };
}

export interface Settings {
  profile: string;
  edge: string;
  pin?: string;
  ca?: string;
  insecure?: boolean;
  machineId?: string;
  credentials: string;
  timeoutMs: number;
  verbose: boolean;
  json: boolean;
}

/** The profile a call names, which must exist when named (login and config set make one). */
export function chosenProfile(root: Command, mayBeNew = false): { name: string; profile?: Profile } {
  const { name, explicit } = profileChoice(root);
  const profile = profileNamed(name);
  if (explicit && !profile && !mayBeNew) {
    throw new UsageError(`no profile "${name}" in ${configPath()}: save one with svc login --profile ${name}`);
  }
  return { name, profile };
}

/** Every setting of this call; `mayBeNew`: a profile named but not saved yet is no error (login). */
export function settingsOf(root: Command, mayBeNew = false): Settings {
  const { name, profile } = chosenProfile(root, mayBeNew);
  const o = root.opts<{ ca?: string; insecure?: boolean; credentials?: string; timeout: string; verbose?: boolean;
    json?: boolean; }>();
  const get = (key: SettingSpec['key']) => resolveSetting(settingNamed(key), root, profile, name);
  const pin = get('pin');
  // trust is one choice: a CA or --insecure typed on the command line sets aside a pin from elsewhere
  const otherTrust = o.ca !== undefined || o.insecure === true;
  return {
    profile: name,
    edge: get('edge').value!,
    pin: otherTrust && pin.source !== 'flag' ? undefined : pin.value,
    ca: o.ca,
    insecure: o.insecure,
    machineId: get('machine-id').value,
    credentials: credentialsPath(o.credentials),
    timeoutMs: Number(o.timeout),
    verbose: o.verbose === true,
    json: o.json === true,
  };
}

export function needMachine(s: Settings): string {
  if (!s.machineId) {
    throw new UsageError('--machine-id (or SVC_MACHINE_ID) is required for this command; or save it in the'
      + ' profile: svc login --machine-id <id>, or svc config set machine-id <id>');
  }
  return s.machineId;
}
