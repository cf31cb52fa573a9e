// Where `svc` keeps machine tokens: SVC_MACHINE_TOKEN wins; otherwise a JSON credentials file
// (default ~/.config/svc/credentials.json, or --credentials / SVC_CREDENTIALS) written with mode
// 0600 when fund-account returns a new token. Tokens are never printed unless just issued.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

export function credentialsPath(explicit?: string): string {
  return explicit ?? process.env.SVC_CREDENTIALS ?? join(homedir(), '.config', 'svc', 'credentials.json');
}

interface CredFile { machines: Record<string, { token: string; saved_at: string }> }

function read(path: string): CredFile {
  if (!existsSync(path)) return { machines: {} };
  const v = JSON.parse(readFileSync(path, 'utf8')) as Partial<CredFile>;
  return { machines: v.machines ?? {} };
}

export function tokenFor(machineId: string | undefined, path: string): string | undefined {
  if (process.env.SVC_MACHINE_TOKEN) return process.env.SVC_MACHINE_TOKEN;
  if (!machineId) return undefined;
  return read(path).machines[machineId]?.token;
}

export function saveToken(machineId: string, token: string, path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const f = read(path);
  f.machines[machineId] = { token, saved_at: new Date().toISOString() };
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, JSON.stringify(f, null, 2) + '\n', { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}
