// Resolves what a process needs before services exist: secrets (generated in sandbox), the database
// (embedded unless DATABASE_URL), and migrations. Shared by `serve`, `migrate` and the admin CLI.
import { join } from 'node:path';
import pg from 'pg';
import type { Config } from './config.ts';
import { parseEncryptionKey } from './platform/crypto/encryption.ts';
import { loadOrCreateSandboxSecrets } from './platform/crypto/sandbox-secrets.ts';
import { embeddedMaxConnections, fitPool } from './platform/db/connection-budget.ts';
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
      const server = await startEmbeddedPostgres({
        directory,
        password: sandbox.postgresPassword,
        maxConnections: embeddedMaxConnections(config.workers, config.databasePoolSize),
      });
      await ensureDatabase(server.connectionString('postgres'), EMBEDDED_DATABASE);
      databaseUrl = server.connectionString(EMBEDDED_DATABASE);
      stopDatabase = () => server.stop();
    }
  }
  if (options.runMigrations) await migrate(databaseUrl);
  return { databaseUrl, adminToken, encryptionKey, stopDatabase };
}

/**
 * The pool each serving process may open on this database: the configured one when every worker's fits
 * under the server's max_connections, else the share that fits (said on stderr); refused when too few.
 */
export async function servingPoolSize(config: Config, databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'tessera-start' });
  await client.connect();
  let maxConnections: number;
  let reserved: number;
  try {
    const settings = await client.query<{ name: string; setting: string }>(
      "SELECT name, setting FROM pg_settings WHERE name IN ('max_connections', 'superuser_reserved_connections', 'reserved_connections')",
    );
    const value = (name: string) => Number(settings.rows.find((r) => r.name === name)?.setting ?? 0);
    maxConnections = value('max_connections');
    reserved = value('superuser_reserved_connections') + value('reserved_connections');
  } finally {
    await client.end();
  }
  const fitted = fitPool({
    maxConnections,
    reserved,
    workers: config.workers,
    poolSize: config.databasePoolSize,
  });
  if (fitted.shrunk) process.stderr.write(`tessera: ${fitted.shrunk}\n`);
  return fitted.poolSize;
}
