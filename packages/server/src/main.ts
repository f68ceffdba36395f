// The one binary: `tessera serve` (default), `tessera migrate`, `tessera admin create-partner|create-merchant|create-store`.
import { runAdminCommand } from './admin/cli/admin-cli.ts';
import { boot } from './boot.ts';
import { type Config, ConfigError, parseConfig } from './config.ts';
import { createApp } from './server.ts';

async function main(argv: string[]): Promise<number> {
  const [command = 'serve', ...rest] = argv;
  let config: Config;
  try {
    config = parseConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`tessera: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  switch (command) {
    case 'serve':
      return serve(config);
    case 'migrate': {
      const booted = await boot(config, { runMigrations: true, reuseRunningEmbedded: true });
      await booted.stopDatabase();
      process.stdout.write('migrations applied\n');
      return 0;
    }
    case 'admin':
      return runAdminCommand(config, rest);
    default:
      process.stderr.write(`tessera: unknown command "${command}" (serve | migrate | admin)\n`);
      return 2;
  }
}

async function serve(config: Config): Promise<number> {
  const booted = await boot(config, { runMigrations: true });
  const tessera = await createApp({ config, ...booted });
  // Shutdown order: drain HTTP, stop sweeps and jobs, close the pool, then stop Postgres.
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) {
      process.stderr.write('tessera: forced exit\n');
      process.exit(1);
    }
    stopping = true;
    tessera.services.logger.info({ signal }, 'shutting down');
    void (async () => {
      try {
        await tessera.close();
        await booted.stopDatabase();
        process.exit(0);
      } catch (err) {
        process.stderr.write(`tessera: shutdown failed: ${(err as Error).message}\n`);
        process.exit(1);
      }
    })();
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));

  const address = await tessera.app.listen({ port: config.port, host: config.host });
  const port = Number(new URL(address).port);
  const base =
    config.publicUrl === `http://${config.host}:${config.port}`
      ? `http://${config.host}:${port}`
      : config.publicUrl;
  const line = (label: string, value: string) => `  ${label.padEnd(20)} ${value}\n`;
  process.stdout.write(
    `\nTessera is running in ${config.mode} mode\n` +
      line('Card issuing API', `${base}${config.basePaths.issuing}`) +
      line('Payments API', `${base}${config.basePaths.payments}`) +
      line('Crypto merchant API', `${base}${config.basePaths.crypto}`) +
      line('Admin API', `${base}/admin`) +
      (config.mode === 'sandbox' ? line('Sandbox API', `${base}/sandbox`) : '') +
      line('API docs (OpenAPI)', `${base}/docs`) +
      line('Admin token', config.mode === 'sandbox' ? booted.adminToken : '(from TESSERA_ADMIN_TOKEN)') +
      line(
        'Database',
        config.databaseUrl ? '(DATABASE_URL)' : `embedded, data in ${config.dataDir}/postgres`,
      ) +
      '\n',
  );
  return -1;
}

const code = await main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`tessera: ${(err as Error).stack ?? String(err)}\n`);
  return 1;
});
if (code >= 0) process.exit(code);
