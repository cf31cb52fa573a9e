// Where `svc` keeps machine tokens: SVC_MACHINE_TOKEN wins; otherwise a JSON credentials file
// (default credentials.json in the config dir, user-files.ts; or --credentials / SVC_CREDENTIALS)
// written with mode 0600 when fund-account returns a new token. Tokens are never printed unless just
// issued.
import { join } from 'node:path';
import { configDir, readJsonFile, updateJsonFile } from './user-files.ts';

export function credentialsPath(explicit?: string): string {
  return explicit || process.env.SVC_CREDENTIALS || join(configDir(), 'credentials.json');
}

interface CredFile { machines: Record<string, { token: string; saved_at: string }> }

const empty = (): CredFile => ({ machines: {} });

export function tokenFor(machineId: string | undefined, path: string): string | undefined {
  if (process.env.SVC_MACHINE_TOKEN) return process.env.SVC_MACHINE_TOKEN;
  if (!machineId) return undefined;
  return readJsonFile(path, empty()).machines[machineId]?.token;
}

/** Adds a token (several `svc` may save at once: user-files.ts keeps every save). */
export function saveToken(machineId: string, token: string, path: string): void {
  updateJsonFile(path, empty(), (f) => {
    f.machines[machineId] = { token, saved_at: new Date().toISOString() };
  });
}
