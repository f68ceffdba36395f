// A gzipped tar written entry by entry, straight to its file: the backup streams the cluster's files into
// it as it reads them (nothing staged on disk), and decides what comes next (the backup's end, its WAL)
// only once the files before are in. Headers are node-tar's, so node-tar and GNU tar read it back.
import { once } from 'node:events';
import type { Stats } from 'node:fs';
import { createReadStream, createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { Header } from 'tar';

const BLOCK = 512;

export class TarGzWriter {
  private readonly gzip = createGzip();
  private readonly done: Promise<void>;
  /** Bytes of file content written (before compression) */
  bytesIn = 0;

  constructor(file: string) {
    this.done = pipeline(this.gzip, createWriteStream(file, { mode: 0o600 }));
    // A failed write (a full disk) ends the pipeline; the next write or finish() reports it.
    this.done.catch(() => undefined);
  }

  async directory(path: string, stats: Pick<Stats, 'mode' | 'mtime'>): Promise<void> {
    await this.header({ path: `${path.replace(/\/$/, '')}/`, type: 'Directory', size: 0, stats });
  }

  /**
   * A file as it is now: `stats.size` bytes of it, however it changes while it is read (a database file
   * being written; the WAL replayed at restore repairs such pages), padded with zeros if it shrank or went.
   */
  async file(path: string, source: string, stats: Pick<Stats, 'mode' | 'mtime' | 'size'>): Promise<void> {
    await this.header({ path, type: 'File', size: stats.size, stats });
    let written = 0;
    try {
      if (stats.size > 0) {
        for await (const chunk of createReadStream(source, { start: 0, end: stats.size - 1 })) {
          const bytes = chunk as Buffer;
          const part = bytes.subarray(0, Math.max(0, stats.size - written));
          await this.write(part);
          written += part.length;
        }
      }
    } catch (err) {
      // Removed since its header was written (a dropped table's file): zeros keep the archive whole, and
      // the WAL replayed at restore removes it again.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (written < stats.size) await this.write(Buffer.alloc(stats.size - written));
    this.bytesIn += stats.size;
    await this.pad(stats.size);
  }

  async buffer(path: string, data: Buffer | string, mode = 0o600): Promise<void> {
    const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data);
    await this.header({ path, type: 'File', size: bytes.length, stats: { mode, mtime: new Date() } });
    await this.write(bytes);
    this.bytesIn += bytes.length;
    await this.pad(bytes.length);
  }

  /** The end-of-archive blocks, then the gzip trailer; resolves once the file is on disk. */
  async finish(): Promise<void> {
    await this.write(Buffer.alloc(BLOCK * 2));
    this.gzip.end();
    await this.done;
  }

  /** Stops writing after a failure: the caller removes the file. */
  abort(): void {
    this.gzip.destroy();
  }

  private async header(entry: {
    path: string;
    type: 'File' | 'Directory';
    size: number;
    stats: Pick<Stats, 'mode' | 'mtime'>;
  }): Promise<void> {
    if (Buffer.byteLength(entry.path) > 100)
      throw new Error(`a path too long for the archive: ${entry.path}`);
    const header = new Header({
      path: entry.path,
      type: entry.type,
      size: entry.size,
      mode: entry.stats.mode & 0o7777,
      mtime: entry.stats.mtime,
      uid: 0,
      gid: 0,
    });
    const block = Buffer.alloc(BLOCK);
    header.encode(block);
    await this.write(block);
  }

  private async pad(size: number): Promise<void> {
    const rest = size % BLOCK;
    if (rest > 0) await this.write(Buffer.alloc(BLOCK - rest));
  }

  private async write(chunk: Buffer): Promise<void> {
    if (!this.gzip.write(chunk)) await once(this.gzip, 'drain');
  }
}
