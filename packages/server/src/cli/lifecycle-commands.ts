// `tessera serve`, `migrate`, `backup` and `restore`: the server's life on this machine.
import cluster from 'node:cluster';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { boot, servingPoolSize } from '../boot.ts';
import type { Config } from '../config.ts';
import { backupCluster, restoreCluster } from '../platform/db/backup.ts';
import { createApp } from '../server.ts';
import { servePrimary, serveWorker } from './cluster.ts';
import { announceRunningServer } from './running-server.ts';

/** Writes each API's OpenAPI document, as the server serves it, into a directory. */
export async function exportOpenApi(config: Config, outDir: string): Promise<number> {
  const booted = await boot(config, { runMigrations: true, reuseRunningEmbedded: true });
  const tessera = await createApp({
    config: { ...config, logLevel: 'warn' },
    ...booted,
    runBackgroundSweeps: false,
  });
  try {
    await mkdir(outDir, { recursive: true });
    for (const api of ['issuing', 'payments', 'crypto', 'admin', 'sandbox']) {
      const answer = await tessera.app.inject({ method: 'GET', url: `/docs/${api}/openapi.json` });
      if (answer.statusCode !== 200) continue;
      const file = join(outDir, `${api}.json`);
      await writeFile(file, `${JSON.stringify(answer.json(), null, 2)}\n`);
      process.stdout.write(`${file}\n`);
    }
    return 0;
  } finally {
    await tessera.close();
    await booted.stopDatabase();
  }
}

export async function migrate(config: Config): Promise<number> {
  const booted = await boot(config, { runMigrations: true, reuseRunningEmbedded: true });
  await booted.stopDatabase();
  process.stdout.write('migrations applied\n');
  return 0;
}

/** A consistent copy of the embedded database (and the sandbox's secrets), also while a server runs. */
export async function backup(config: Config, file: string): Promise<number> {
  if (config.databaseUrl) {
    process.stderr.write(
      "tessera: with DATABASE_URL, back up with Postgres's own tools (pg_dump -Fc, or your provider's backups): see docs/operations.md\n",
    );
    return 2;
  }
  const booted = await boot(config, { runMigrations: false, reuseRunningEmbedded: true });
  try {
    const result = await backupCluster({
      superuserUrl: booted.databaseUrl,
      clusterDir: resolve(config.dataDir, 'postgres'),
      secretsFile: resolve(config.dataDir, 'secrets.json'),
      file: resolve(file),
    });
    process.stdout.write(
      `backed up to ${result.file} (${Math.ceil(result.bytes / 1024)} KiB; WAL ${result.manifest.startWalFile} to ${result.manifest.stopWalFile})\n` +
        'The archive holds the encryption key of this sandbox: keep it as safe as the data.\n',
    );
    return 0;
  } finally {
    await booted.stopDatabase();
  }
}

/** Unpacks a backup into a fresh TESSERA_DATA_DIR and lets Postgres recover it. */
export async function restore(config: Config, file: string): Promise<number> {
  if (config.databaseUrl) {
    process.stderr.write('tessera: with DATABASE_URL, restore with pg_restore: see docs/operations.md\n');
    return 2;
  }
  const manifest = await restoreCluster({ file: resolve(file), dataDir: resolve(config.dataDir) });
  // Starting the server replays the backup's WAL; then the database is ready for `tessera serve`.
  const booted = await boot(config, { runMigrations: true });
  await booted.stopDatabase();
  process.stdout.write(
    `restored the backup of ${manifest.createdAt} into ${config.dataDir}; start it with \`tessera serve\`\n`,
  );
  return 0;
}

/**
 * A generated sandbox token is shown on a terminal only: stdout piped into a log collector is a log.
 * A configured token is never printed.
 */
function adminTokenLine(config: Config, token: string): string {
  if (config.adminToken) return '(from TESSERA_ADMIN_TOKEN)';
  const file = `${config.dataDir}/secrets.json`;
  return process.stdout.isTTY ? token : `(in ${file}, field adminToken: not printed into logs)`;
}

/** Part of the shutdown deadline kept for stopping the embedded Postgres (a fast shutdown). */
const POSTGRES_STOP_RESERVE_MS = 2000;

export async function serve(config: Config): Promise<number> {
  if (cluster.isWorker) return serveWorker(config);
  if (config.workers > 1) {
    // The data directory says where the server listens before the banner says it is running.
    return servePrimary(config, (address, booted) => {
      void announceRunningServer(config.dataDir, baseUrl(config, address))
        .catch(() => undefined)
        .then(() => printBanner(config, address, booted.adminToken));
    });
  }
  const booted = await boot(config, { runMigrations: true });
  const databasePoolSize = await servingPoolSize(config, booted.databaseUrl).catch(async (err: unknown) => {
    await booted.stopDatabase();
    throw err;
  });
  const tessera = await createApp({ config: { ...config, databasePoolSize }, ...booted });
  // Shutdown: webhook attempts cut short, HTTP drained (503 to anything new), sweeps and jobs stopped,
  // the pool closed, then Postgres stopped; all within TESSERA_SHUTDOWN_TIMEOUT_MS, a second signal
  // or a stop that overruns its deadline exits at once.
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) {
      process.stderr.write('tessera: forced exit\n');
      process.exit(1);
    }
    stopping = true;
    const started = Date.now();
    tessera.services.logger.info({ signal }, 'shutting down');
    const backstop = setTimeout(() => {
      process.stderr.write('tessera: the stop overran its deadline; exiting\n');
      void booted.stopDatabase().finally(() => process.exit(1));
    }, config.shutdownTimeoutMs + 5000);
    backstop.unref();
    void (async () => {
      try {
        // What is left of the deadline once the embedded Postgres has had its share for a clean stop.
        await tessera.close({
          timeoutMs: Math.max(1000, config.shutdownTimeoutMs - POSTGRES_STOP_RESERVE_MS),
        });
        await booted.stopDatabase();
        tessera.services.logger.info({ signal, durationMs: Date.now() - started }, 'stopped');
        process.exit(0);
      } catch (err) {
        process.stderr.write(`tessera: shutdown failed: ${(err as Error).message}\n`);
        await booted.stopDatabase().catch(() => undefined);
        process.exit(1);
      }
    })();
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));

  const address = await tessera.app.listen({ port: config.port, host: config.host });
  await announceRunningServer(config.dataDir, baseUrl(config, address)).catch((err: unknown) =>
    tessera.services.logger.warn({ err }, 'the data directory does not say where this server listens'),
  );
  printBanner(config, address, booted.adminToken);
  return -1;
}

/** Where the server answers: the public URL, with the port actually bound when PORT=0. */
function baseUrl(config: Config, address: string): string {
  const port = Number(new URL(address).port);
  return config.publicUrl === `http://${config.host}:${config.port}`
    ? `http://${config.host}:${port}`
    : config.publicUrl;
}

/** What a start prints: where each API runs (the port actually bound when PORT=0). */
function printBanner(config: Config, address: string, adminToken: string): void {
  const base = baseUrl(config, address);
  const line = (label: string, value: string) => `  ${label.padEnd(20)} ${value}\n`;
  process.stdout.write(
    `\nTessera is running in ${config.mode} mode\n` +
      line('Card issuing API', `${base}${config.basePaths.issuing}`) +
      line('Payments API', `${base}${config.basePaths.payments}`) +
      line('Crypto merchant API', `${base}${config.basePaths.crypto}`) +
      line('Admin API', `${base}/admin`) +
      (config.mode === 'sandbox' ? line('Sandbox API', `${base}/sandbox`) : '') +
      line('API docs (OpenAPI)', `${base}/docs`) +
      line('Console', `${base}/console`) +
      line('Admin token', adminTokenLine(config, adminToken)) +
      line(
        'Database',
        config.databaseUrl ? '(DATABASE_URL)' : `embedded, data in ${config.dataDir}/postgres`,
      ) +
      '\n',
  );
}
