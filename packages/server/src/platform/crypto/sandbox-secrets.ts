// Sandbox mode generates what production must be given: the admin token and the encryption key,
// written once into the data directory (mode 0600) so a second start reuses them. Two processes starting
// together on one directory agree: the file appears whole and once (a hard link of a complete temporary
// file, which fails if another process linked first), and the second reads the first's secrets.
import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
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
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(draft, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  try {
    await link(draft, file);
    return secrets;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return JSON.parse(await readFile(file, 'utf8')) as SandboxSecrets;
  } finally {
    await rm(draft, { force: true });
  }
}
