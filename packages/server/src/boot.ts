// Resolves what a process needs before services exist: secrets (generated in sandbox), the database
// (embedded unless DATABASE_URL), and migrations. Shared by `serve`, `migrate` and the admin CLI.
import { join } from 'node:path';
import type { Config } from './config.ts';
import { parseEncryptionKey } from './platform/crypto/encryption.ts';
import { loadOrCreateSandboxSecrets } from './platform/crypto/sandbox-secrets.ts';
import {
  ensureDatabase,
  runningEmbeddedPort,
  startEmbeddedPostgres,
} from './platform/db/embedded-postgres.ts';
import { migrate } from './platform/db/migrate.ts';

export const EMBEDDED_DATABASE = 'tessera';

export interface Booted {
  databaseUrl: string;
  adminToken: string;
  encryptionKey: Buffer;
  /** Stops the embedded Postgres this process started (no-op otherwise) */
  stopDatabase(): Promise<void>;
}

export async function boot(
  config: Config,
  options: { runMigrations: boolean; reuseRunningEmbedded?: boolean },
): Promise<Booted> {
  const sandbox = config.mode === 'sandbox' ? await loadOrCreateSandboxSecrets(config.dataDir) : undefined;
  const adminToken = config.adminToken ?? sandbox?.adminToken;
  const keyText = config.encryptionKey ?? sandbox?.encryptionKey;
  if (!adminToken || !keyText) throw new Error('an admin token and an encryption key are required');
  const encryptionKey = parseEncryptionKey(keyText);

  let databaseUrl = config.databaseUrl;
  let stopDatabase = async () => {};
  if (!databaseUrl) {
    if (!sandbox) throw new Error('DATABASE_URL is required outside sandbox mode');
    const directory = join(config.dataDir, 'postgres');
    const runningPort = options.reuseRunningEmbedded ? runningEmbeddedPort(directory) : undefined;
    if (runningPort) {
      databaseUrl = `postgres://tessera:${encodeURIComponent(sandbox.postgresPassword)}@127.0.0.1:${runningPort}/${EMBEDDED_DATABASE}`;
    } else {
      const server = await startEmbeddedPostgres({ directory, password: sandbox.postgresPassword });
      await ensureDatabase(server.connectionString('postgres'), EMBEDDED_DATABASE);
      databaseUrl = server.connectionString(EMBEDDED_DATABASE);
      stopDatabase = () => server.stop();
    }
  }
  if (options.runMigrations) await migrate(databaseUrl);
  return { databaseUrl, adminToken, encryptionKey, stopDatabase };
}
