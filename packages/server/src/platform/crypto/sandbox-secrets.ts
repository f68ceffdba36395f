// Sandbox mode generates what production must be given: the admin token and the encryption key,
// written once into the data directory (mode 0600) so a second start reuses them.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomAlphanumeric } from './hashing.ts';

export interface SandboxSecrets {
  adminToken: string;
  encryptionKey: string;
  postgresPassword: string;
}

export async function loadOrCreateSandboxSecrets(dataDir: string): Promise<SandboxSecrets> {
  const file = join(dataDir, 'secrets.json');
  try {
    return JSON.parse(await readFile(file, 'utf8')) as SandboxSecrets;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const secrets: SandboxSecrets = {
    adminToken: `adm_${randomAlphanumeric(40)}`,
    encryptionKey: randomBytes(32).toString('hex'),
    postgresPassword: randomAlphanumeric(32),
  };
  await mkdir(dataDir, { recursive: true });
  await writeFile(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  return secrets;
}
