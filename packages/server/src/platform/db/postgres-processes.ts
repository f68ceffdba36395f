// The embedded Postgres's processes: the owner file a live Tessera keeps beside its cluster, clearing a
// server a crashed process left behind, running the server's tools, and stopping a server by signal.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { platform } from 'node:os';
import { dirname, join } from 'node:path';

import { EmbeddedPostgresError } from './embedded-postgres-error.ts';

export interface RunAs {
  uid?: number;
  gid?: number;
}

export interface Owner {
  pid: number;
  postmasterPid: number;
  port: number;
}

export function readOwner(directory: string): Owner | undefined {
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
export async function clearPreviousServer(
  directory: string,
  notice: (message: string) => void,
): Promise<void> {
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

export async function stopServer(child: ChildProcess): Promise<void> {
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

export function run(
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

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the process is a Postgres server (a pid in a stale lock file may belong to anything). */
export function isPostgres(pid: number): boolean {
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

export function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

export async function exited(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !isAlive(pid);
}
