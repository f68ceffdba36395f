// `tessera backup FILE` / `tessera restore FILE` for the embedded database. The embedded binaries have no
// pg_dump, so a backup is Postgres's own online physical backup (the low-level base backup API): a
// temporary replication slot holds the WAL, pg_backup_start, a copy of the cluster's files,
// pg_backup_stop, then the backup label and the WAL written meanwhile. It is consistent while the server
// runs, and restores into a fresh data directory, where Postgres replays that WAL to the backup's end.
// The archive also holds the sandbox's secrets (the encryption key among them): keep it as safe as them.
import type { Stats } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import * as tar from 'tar';
import { TarGzWriter } from './tar-stream-writer.ts';

/** Written into every archive; a restore checks it. */
interface BackupManifest {
  format: 'tessera-backup/1';
  createdAt: string;
  serverVersion: string;
  startWalFile: string;
  stopWalFile: string;
  hasSecrets: boolean;
}

// Files and directories the documentation of the low-level API says to leave out (their contents are
// rebuilt or meaningless in a copy); directories stay, empty.
const SKIPPED_FILES = new Set(['postmaster.pid', 'postmaster.opts', 'backup_label', 'tablespace_map']);
const EMPTIED_DIRS = new Set([
  'pg_wal',
  'pg_replslot',
  'pg_dynshmem',
  'pg_notify',
  'pg_serial',
  'pg_snapshots',
  'pg_stat_tmp',
  'pg_subtrans',
]);

export interface BackupResult {
  file: string;
  bytes: number;
  manifest: BackupManifest;
}

/**
 * Backs up the running embedded cluster behind `superuserUrl`, whose files are in `clusterDir`, into a
 * gzipped tar at `file` (mode 0600), streamed: each of the cluster's files goes into the archive as it is
 * read, nothing is staged (so a backup needs the archive's size free, not the database's twice).
 * `secretsFile` (the sandbox's) goes in too when it exists.
 */
export async function backupCluster(options: {
  superuserUrl: string;
  clusterDir: string;
  secretsFile: string;
  file: string;
}): Promise<BackupResult> {
  const client = new pg.Client({
    connectionString: options.superuserUrl,
    application_name: 'tessera-backup',
  });
  await client.connect();
  const archive = new TarGzWriter(options.file);
  try {
    const version = (await client.query<{ server_version: string }>('SHOW server_version')).rows[0]
      ?.server_version;
    const segmentBytes = await walSegmentBytes(client);
    // The slot lives as long as this session and keeps every WAL segment from now on.
    await client.query(`SELECT pg_create_physical_replication_slot($1, true, true)`, [
      `tessera_backup_${process.pid}`,
    ]);
    await client.query(`SELECT pg_backup_start('tessera backup', true)`);
    await archiveCluster(archive, options.clusterDir, 'postgres');
    const stop = await client.query<{ lsn: string; labelfile: string; spcmapfile: string }>(
      'SELECT lsn, labelfile, spcmapfile FROM pg_backup_stop(false)',
    );
    const { lsn, labelfile, spcmapfile } = stop.rows[0] ?? { lsn: '', labelfile: '', spcmapfile: '' };
    await archive.buffer('postgres/backup_label', labelfile);
    if (spcmapfile) await archive.buffer('postgres/tablespace_map', spcmapfile);

    // The WAL from the backup's start to its end: what recovery needs to make the copy consistent.
    const startWalFile = /START WAL LOCATION: .* \(file ([0-9A-F]{24})\)/.exec(labelfile)?.[1];
    if (!startWalFile) throw new Error('the backup label names no start WAL file');
    const stopWalFile = walFileName(startWalFile.slice(0, 8), lsn, segmentBytes);
    const walDir = join(options.clusterDir, 'pg_wal');
    for (const name of (await readdir(walDir)).sort()) {
      const isSegment = /^[0-9A-F]{24}$/.test(name) && name >= startWalFile && name <= stopWalFile;
      if (isSegment || name.endsWith('.history')) {
        const path = join(walDir, name);
        await archive.file(`postgres/pg_wal/${name}`, path, await stat(path));
      }
    }

    const hasSecrets = await exists(options.secretsFile);
    if (hasSecrets) await archive.buffer('secrets.json', await readFile(options.secretsFile));
    const manifest: BackupManifest = {
      format: 'tessera-backup/1',
      createdAt: new Date().toISOString(),
      serverVersion: version ?? 'unknown',
      startWalFile,
      stopWalFile,
      hasSecrets,
    };
    await archive.buffer('tessera-backup.json', `${JSON.stringify(manifest, null, 2)}\n`);
    await archive.finish();
    return { file: options.file, bytes: (await stat(options.file)).size, manifest };
  } catch (err) {
    archive.abort();
    await rm(options.file, { force: true });
    throw err;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The cluster's files under `prefix`, as the low-level backup API says: some files left out, some
 * directories emptied (their contents are rebuilt or meaningless in a copy). A file that disappears
 * while the backup runs (a dropped table, a removed temporary file) is skipped, as pg_basebackup does.
 */
async function archiveCluster(archive: TarGzWriter, clusterDir: string, prefix: string): Promise<void> {
  const walk = async (relative: string): Promise<void> => {
    const directory = join(clusterDir, relative);
    for (const entry of (await readdir(directory, { withFileTypes: true })).sort((a, b) =>
      a.name < b.name ? -1 : 1,
    )) {
      const path = relative ? `${relative}/${entry.name}` : entry.name;
      const [top] = path.split('/');
      if (!relative && SKIPPED_FILES.has(entry.name)) continue;
      if (entry.name === 'pg_internal.init') continue;
      let stats: Stats;
      try {
        stats = await stat(join(clusterDir, path));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw err;
      }
      if (stats.isDirectory()) {
        await archive.directory(`${prefix}/${path}`, stats);
        if (!(top && EMPTIED_DIRS.has(top) && !relative)) await walk(path);
        continue;
      }
      if (top && EMPTIED_DIRS.has(top)) continue;
      await archive.file(`${prefix}/${path}`, join(clusterDir, path), stats);
    }
  };
  await archive.directory(prefix, await stat(clusterDir));
  await walk('');
}

/**
 * Unpacks a backup into a data directory that has no cluster yet: the cluster's files into
 * `<dataDir>/postgres`, the secrets beside them. Starting the embedded server then replays the WAL.
 */
export async function restoreCluster(options: { file: string; dataDir: string }): Promise<BackupManifest> {
  const clusterDir = join(options.dataDir, 'postgres');
  if ((await exists(clusterDir)) && (await readdir(clusterDir)).length > 0) {
    throw new Error(
      `${clusterDir} already holds a database; restore into a fresh TESSERA_DATA_DIR (nothing is overwritten)`,
    );
  }
  // Unpacked beside its place (same filesystem), then moved into it: no second copy of the database.
  await mkdir(options.dataDir, { recursive: true });
  const staging = await mkdtemp(join(options.dataDir, '.restore-'));
  try {
    await tar.x({ file: options.file, cwd: staging });
    const manifest = JSON.parse(
      await readFile(join(staging, 'tessera-backup.json'), 'utf8'),
    ) as BackupManifest;
    if (manifest.format !== 'tessera-backup/1') throw new Error(`${options.file} is not a Tessera backup`);
    await rm(clusterDir, { recursive: true, force: true });
    await rename(join(staging, 'postgres'), clusterDir);
    if (manifest.hasSecrets) await cp(join(staging, 'secrets.json'), join(options.dataDir, 'secrets.json'));
    return manifest;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && !(await exists(options.file))) {
      throw new Error(`no such backup file: ${options.file}`);
    }
    throw err;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

async function walSegmentBytes(client: pg.Client): Promise<bigint> {
  const { rows } = await client.query<{ setting: string }>(
    `SELECT setting FROM pg_settings WHERE name = 'wal_segment_size'`,
  );
  return BigInt(rows[0]?.setting ?? 16 * 1024 * 1024);
}

/** The WAL file holding `lsn` ("X/Y") on a timeline, as Postgres names it. */
function walFileName(timeline: string, lsn: string, segmentBytes: bigint): string {
  const [high = '0', low = '0'] = lsn.split('/');
  const position = (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
  const segment = position / segmentBytes;
  const perId = 0x1_0000_0000n / segmentBytes;
  const hex = (n: bigint) => n.toString(16).toUpperCase().padStart(8, '0');
  return `${timeline}${hex(segment / perId)}${hex(segment % perId)}`;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
