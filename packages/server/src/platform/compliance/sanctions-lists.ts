// Importing the official sanctions lists and screening against them (docs/compliance.md). An import is one
// transaction: the file is read whole first (a malformed one changes nothing), a file already imported is
// answered as such (its content hash), and the entries are versioned — new, changed (its old version
// closed, a new one opened) or gone (closed) — under a lock per list, so two imports of one list never
// interleave. Every process keeps the current entries as an in-memory index (screening-index.ts), rebuilt
// when it hears of a newer import.
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Clock } from '../clock/clock.ts';
import type { Db, Executor } from '../db/database.ts';
import type { TenantCache } from '../tenants/tenant-cache.ts';
import {
  entryHash,
  type ListEntry,
  type ListFile,
  ListFormatError,
  type SanctionsSource,
} from './sanctions-entry.ts';
import { readEuList } from './sanctions-eu.ts';
import { readOfacList } from './sanctions-ofac.ts';
import { type OfacCsvFiles, readOfacCsv } from './sanctions-ofac-csv.ts';
import { readUnList } from './sanctions-un.ts';
import {
  type IndexedEntry,
  type ScreenedParty,
  ScreeningIndex,
  type ScreeningMatch,
} from './screening-index.ts';

/** The CSV files as one text to hash: each named, in one order, so the same files are the same import */
const csvDigest = (files: OfacCsvFiles) =>
  (['sdn', 'alt', 'add', 'comments'] as const)
    .map((name) => `${name}\u0000${files[name] ?? ''}`)
    .join('\u0000');

const READERS: Record<SanctionsSource, (body: string) => ListFile> = {
  eu: readEuList,
  un: readUnList,
  ofac: readOfacList,
};

export interface SanctionsImport {
  id: string;
  source: SanctionsSource;
  sha256: string;
  generatedAt: Date | null;
  importedAt: Date;
  importedBy: string;
  entries: number;
  added: number;
  changed: number;
  removed: number;
  /** Everyone screened again after it (party-screening.ts): how far that has come */
  rescreen: { screened: number; alerts: number; finishedAt: Date | null } | null;
}

/** Rows written per statement: a list of tens of thousands of entries in a few round trips */
const BATCH = 500;

export class SanctionsLists {
  #index: { importId: bigint; index: ScreeningIndex } | undefined;

  constructor(private readonly deps: { clock: Clock; cache: TenantCache; threshold: number }) {}

  get threshold(): number {
    return this.deps.threshold;
  }

  /**
   * Reads the file as `source`'s format and applies it: the import and its counts, and whether it was
   * applied now (false: this very file was imported before, and nothing changed).
   */
  async import(
    db: Db,
    source: SanctionsSource,
    /** The list file; OFAC's list may come as its CSV files instead */
    body: string | OfacCsvFiles,
    importedBy: string,
  ): Promise<{ import: SanctionsImport; applied: boolean }> {
    if (typeof body !== 'string' && source !== 'ofac')
      throw new ListFormatError(`the ${source.toUpperCase()} list is imported from its XML file`);
    const file = typeof body === 'string' ? READERS[source](body) : readOfacCsv(body);
    const sha256 = createHash('sha256')
      .update(typeof body === 'string' ? body : csvDigest(body))
      .digest('hex');
    const done = await db.transaction().execute(async (tx) => {
      await sql`SELECT pg_advisory_xact_lock(hashtext(${`sanctions:${source}`}))`.execute(tx);
      const before = await tx
        .selectFrom('sanctions_imports')
        .selectAll()
        .where('source', '=', source)
        .where('sha256', '=', sha256)
        .executeTakeFirst();
      if (before)
        return { import: (await this.withRescreens(tx, [before]))[0] as SanctionsImport, applied: false };
      const row = await tx
        .insertInto('sanctions_imports')
        .values({
          source,
          sha256,
          generated_at: file.generatedAt,
          imported_at: this.deps.clock.now(),
          imported_by: importedBy,
          entries: file.entries.length,
          added: 0,
          changed: 0,
          removed: 0,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      const counts = await applyEntries(tx, source, row.id, file.entries);
      // Everyone screened again, in the background, from this commit on (party-screening.ts)
      await tx
        .insertInto('compliance_rescreens')
        .values({ import_id: row.id, started_at: this.deps.clock.now() })
        .execute();
      const done = await tx
        .updateTable('sanctions_imports')
        .set(counts)
        .where('id', '=', row.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return { import: (await this.withRescreens(tx, [done]))[0] as SanctionsImport, applied: true };
    });
    // This process's next screening reads the newest import again rather than wait for the news of it
    // (the news clears every process's cache too, a moment later)
    if (done.applied) this.deps.cache.clear();
    return done;
  }

  /** The imports, newest first, a page before the last id seen */
  async imports(db: Executor, page: { before?: string; limit: number }): Promise<SanctionsImport[]> {
    let query = db.selectFrom('sanctions_imports').selectAll().orderBy('id', 'desc').limit(page.limit);
    if (page.before) query = query.where('id', '<', page.before);
    return this.withRescreens(db, await query.execute());
  }

  private async withRescreens(db: Executor, rows: ImportRow[]): Promise<SanctionsImport[]> {
    const ids = rows.map((r) => r.id);
    const rescreens = new Map(
      ids.length === 0
        ? []
        : (
            await db
              .selectFrom('compliance_rescreens')
              .select(['import_id', 'screened', 'alerts', 'finished_at'])
              .where('import_id', 'in', ids)
              .execute()
          ).map((r) => [
            r.import_id,
            { screened: Number(r.screened), alerts: r.alerts, finishedAt: r.finished_at },
          ]),
    );
    return rows.map((row) => ({ ...importOf(row), rescreen: rescreens.get(row.id) ?? null }));
  }

  /** The party's matches among the lists' current entries, best first (no side effect) */
  async screen(
    db: Executor,
    party: ScreenedParty,
    threshold = this.deps.threshold,
  ): Promise<ScreeningMatch[]> {
    return (await this.index(db)).screen(party, threshold);
  }

  /** The entries that list this digital-currency address */
  async screenAddress(db: Executor, address: string): Promise<IndexedEntry[]> {
    return (await this.index(db)).screenAddress(address);
  }

  /**
   * The index of the current entries, rebuilt when a newer import is heard of or (with `atLeastImport`)
   * known to exist. It is labelled with the newest import visible before its entries
   * were read, so an index read while an import was committing is rebuilt once it can be seen.
   */
  async index(db: Executor, atLeastImport?: string): Promise<ScreeningIndex> {
    const latestImport = async () => {
      const row = await db
        .selectFrom('sanctions_imports')
        .select(sql<string>`coalesce(max(id), 0)::text`.as('id'))
        .executeTakeFirst();
      return BigInt(row?.id ?? '0');
    };
    const heard =
      (await this.deps.cache.get<bigint>('sanctions:latest-import', async () => ({
        value: await latestImport(),
      }))) ?? 0n;
    const wanted = [heard, BigInt(atLeastImport ?? 0)].reduce((a, b) => (a > b ? a : b));
    if (!this.#index || this.#index.importId < wanted) {
      const visible = await latestImport();
      const rows = await db
        .selectFrom('sanctions_entries')
        .select(['id', 'source', 'content'])
        .where('closed_by', 'is', null)
        .orderBy('id')
        .execute();
      const entries = rows.map((r) => ({
        id: r.id,
        source: r.source as SanctionsSource,
        entry: r.content as unknown as ListEntry,
      }));
      this.#index = { importId: visible, index: new ScreeningIndex(entries) };
    }
    return this.#index.index;
  }
}

/** The file's entries against the list's current ones: new versions opened, old ones closed */
async function applyEntries(
  tx: Executor,
  source: SanctionsSource,
  importId: string,
  entries: readonly ListEntry[],
): Promise<{ added: number; changed: number; removed: number }> {
  const current = new Map(
    (
      await tx
        .selectFrom('sanctions_entries')
        .select(['id', 'source_id', 'version', 'content_sha256'])
        .where('source', '=', source)
        .where('closed_by', 'is', null)
        .execute()
    ).map((r) => [r.source_id, r]),
  );
  const opened: { source_id: string; version: number; content: string; content_sha256: string }[] = [];
  const closed: string[] = [];
  let added = 0;
  let changed = 0;
  const seen = new Set<string>();
  for (const entry of entries) {
    if (seen.has(entry.sourceId)) continue;
    seen.add(entry.sourceId);
    const hash = entryHash(entry);
    const was = current.get(entry.sourceId);
    if (was?.content_sha256 === hash) continue;
    if (was) {
      closed.push(was.id);
      changed++;
    } else added++;
    opened.push({
      source_id: entry.sourceId,
      version: (was?.version ?? 0) + 1,
      content: JSON.stringify(entry),
      content_sha256: hash,
    });
  }
  const gone = [...current.values()].filter((r) => !seen.has(r.source_id)).map((r) => r.id);
  for (let i = 0; i < closed.length + gone.length; i += BATCH) {
    const ids = [...closed, ...gone].slice(i, i + BATCH);
    await tx.updateTable('sanctions_entries').set({ closed_by: importId }).where('id', 'in', ids).execute();
  }
  for (let i = 0; i < opened.length; i += BATCH) {
    await tx
      .insertInto('sanctions_entries')
      .values(opened.slice(i, i + BATCH).map((o) => ({ ...o, source, added_by: importId })))
      .execute();
  }
  return { added, changed, removed: gone.length };
}

interface ImportRow {
  id: string;
  source: string;
  sha256: string;
  generated_at: Date | null;
  imported_at: Date;
  imported_by: string;
  entries: number;
  added: number;
  changed: number;
  removed: number;
}

function importOf(row: ImportRow): Omit<SanctionsImport, 'rescreen'> {
  return {
    id: row.id,
    source: row.source as SanctionsSource,
    sha256: row.sha256,
    generatedAt: row.generated_at,
    importedAt: row.imported_at,
    importedBy: row.imported_by,
    entries: row.entries,
    added: row.added,
    changed: row.changed,
    removed: row.removed,
  };
}
