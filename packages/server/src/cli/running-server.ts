// Where the server of a data directory listens: `tessera serve` writes `server.json` there once it
// listens (the port actually bound, also with PORT=0) and removes it when it exits, so the CLI's client
// commands run beside it find it without --server or PORT. A file whose process is gone is ignored.
import { readFileSync, rmSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

interface RunningServer {
  url: string;
  pid: number;
  startedAt: string;
}

const fileOf = (dataDir: string) => join(dataDir, 'server.json');

/** Records this process as the data directory's server at `url`; the record goes when it exits. */
export async function announceRunningServer(dataDir: string, url: string): Promise<void> {
  const file = fileOf(dataDir);
  const record: RunningServer = { url, pid: process.pid, startedAt: new Date().toISOString() };
  await writeFile(`${file}.tmp`, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  await rename(`${file}.tmp`, file);
  // Gone with this process — unless another server has announced itself there since.
  process.once('exit', () => {
    try {
      if ((JSON.parse(readFileSync(file, 'utf8')) as RunningServer).pid === process.pid) rmSync(file);
    } catch {
      // already gone
    }
  });
}

/** The URL of the data directory's running server, if one announced itself and is still alive. */
export async function runningServerUrl(dataDir: string): Promise<string | undefined> {
  let record: Partial<RunningServer>;
  try {
    record = JSON.parse(await readFile(fileOf(dataDir), 'utf8')) as Partial<RunningServer>;
  } catch {
    return undefined;
  }
  if (typeof record.url !== 'string' || typeof record.pid !== 'number') return undefined;
  try {
    process.kill(record.pid, 0);
  } catch (err) {
    // EPERM: alive, another user's; ESRCH: gone
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  }
  return record.url;
}
