// The one binary: `tessera serve` (default), `tessera migrate`, `tessera admin create-partner|create-merchant|create-store`.
import { runAdminCommand } from './admin/cli/admin-cli.ts';
import { boot } from './boot.ts';
import { type Config, ConfigError, parseConfig } from './config.ts';
import { EmbeddedPostgresError } from './platform/db/embedded-postgres.ts';
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
        await tessera.close();
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
  process.stderr.write(`tessera: ${describeFailure(err)}\n`);
  return 1;
});
if (code >= 0) process.exit(code);

/** What went wrong, for a person: the message (a start error carries its fix); a stack only when debugging. */
function describeFailure(err: unknown): string {
  if (!(err instanceof Error)) return `failed: ${String(err)}`;
  const debug = process.env.LOG_LEVEL === 'debug' || process.env.LOG_LEVEL === 'trace';
  if (debug && err.stack) return err.stack;
  const code = (err as NodeJS.ErrnoException).code;
  const hint =
    err instanceof EmbeddedPostgresError
      ? ''
      : code === 'EADDRINUSE'
        ? '\n  Fix: another program uses this port; set PORT to a free one (PORT=0 picks one)'
        : code === 'EACCES'
          ? '\n  Fix: this user may not use that file or port; check TESSERA_DATA_DIR and PORT'
          : code === 'ECONNREFUSED'
            ? '\n  Fix: the database does not answer; check DATABASE_URL and that Postgres runs'
            : '\n  (LOG_LEVEL=debug shows where it failed)';
  return `${err.message}${hint}`;
}
