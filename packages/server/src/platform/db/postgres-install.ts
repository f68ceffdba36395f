// Before the embedded Postgres starts: its binaries found, the unprivileged user it runs as when Tessera
// runs as root, its data directory made reachable and private, and the cluster initialised by initdb.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { arch, platform, tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';

import { EmbeddedPostgresError, indent } from './embedded-postgres-error.ts';
import { type RunAs, run } from './postgres-processes.ts';

export interface Binaries {
  postgres: string;
  initdb: string;
}

export const SERVER_USER = 'postgres';

export async function findBinaries(): Promise<Binaries> {
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
export async function serverUser(): Promise<RunAs> {
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

export async function prepareDirectory(directory: string, runAs: RunAs): Promise<void> {
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

export function firstUnsearchableParent(directory: string, runAs: RunAs): string | undefined {
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

export async function initialise(
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
