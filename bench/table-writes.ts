// Rows written per operation, per table, from Postgres's own counters: the check that a floor writes what
// its path writes (the same tables, as many rows), printed beside the figures; and the WAL an operation
// makes, since every commit waits for its WAL to be flushed (the ceiling of a write path on many cores).
import { CompiledQuery, sql } from 'kysely';
import type { Db } from '../packages/server/src/platform/db/database.ts';

interface Counters {
  inserted: number;
  updated: number;
  deleted: number;
}
export interface TableWrites {
  tables: Map<string, Counters>;
  /** The WAL's write position, in bytes from its start */
  walBytes: number;
  /** The same position as an LSN, where pg_walinspect reads from */
  walLsn: string;
}

/** Rows inserted, updated and deleted so far, by table (counters of committed work). */
export async function tableWrites(db: Db): Promise<TableWrites> {
  // A backend publishes its counters within 10 s of going idle: wait for the last operations' to land.
  await new Promise((resolve) => setTimeout(resolve, 11_000));
  const { rows } = await sql<{ relname: string; ins: string; upd: string; del: string }>`
    SELECT relname, n_tup_ins::text AS ins, n_tup_upd::text AS upd, n_tup_del::text AS del
    FROM pg_stat_user_tables`.execute(db);
  const wal = await sql<{ bytes: string; lsn: string }>`
    SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS bytes, pg_current_wal_lsn()::text AS lsn`.execute(
    db,
  );
  return {
    tables: new Map(
      rows.map((r) => [
        r.relname,
        { inserted: Number(r.ins), updated: Number(r.upd), deleted: Number(r.del) },
      ]),
    ),
    walBytes: Number(wal.rows[0]?.bytes ?? 0),
    walLsn: wal.rows[0]?.lsn ?? '0/0',
  };
}

/** Operations between two readings: the rows inserted into the path's own table (one per operation) */
export function operationsBetween(before: TableWrites, after: TableWrites, primaryTable: string): number {
  const inserted = (t: TableWrites) => t.tables.get(primaryTable)?.inserted ?? 0;
  return Math.max(1, inserted(after) - inserted(before));
}

/** WAL records of one kind between two positions ($1, $2), as pg_walinspect counts them */
export interface WalRecordType {
  type: string;
  records: string;
  bytes: string;
  fpi: string;
}
/** Each record between two WAL positions once, by its kind (a heap insert, a btree entry, a commit) */
export const WAL_BY_RECORD_TYPE = `SELECT "resource_manager/record_type" AS type, count::text AS records,
  combined_size::text AS bytes, fpi_size::text AS fpi
  FROM pg_get_wal_stats($1::pg_lsn, $2::pg_lsn, true) WHERE count > 0 ORDER BY combined_size DESC`;

/**
 * Where an operation's WAL goes (issue 54), read back from the WAL itself with pg_walinspect: per relation
 * (its table or index; `-` for records that touch no block: commits, the transaction's own records) the
 * bytes of its records, and of them the full-page images, per operation, the largest first. A record that
 * touches several blocks (an index split, a heap update onto another page) is counted whole at each. Then
 * each record once, by its kind (a heap insert, a btree entry, a commit).
 */
export async function walBreakdown(
  db: Db,
  before: TableWrites,
  after: TableWrites,
  operations: number,
): Promise<string> {
  await sql`CREATE EXTENSION IF NOT EXISTS pg_walinspect`.execute(db);
  const { rows } = await sql<{ relation: string; records: string; bytes: string; fpi: string }>`
    WITH records AS (
      SELECT r.start_lsn, r.record_length, r.fpi_length FROM pg_get_wal_records_info(
        ${before.walLsn}::pg_lsn, ${after.walLsn}::pg_lsn) r),
    blocks AS (
      SELECT DISTINCT ON (b.start_lsn, b.relfilenode) b.start_lsn, b.relfilenode
      FROM pg_get_wal_block_info(${before.walLsn}::pg_lsn, ${after.walLsn}::pg_lsn) b)
    SELECT coalesce(c.relname, CASE WHEN b.relfilenode IS NULL THEN '-' ELSE b.relfilenode::text END) AS relation,
      count(*)::text AS records, sum(r.record_length)::text AS bytes, sum(r.fpi_length)::text AS fpi
    FROM records r
    LEFT JOIN blocks b ON b.start_lsn = r.start_lsn
    LEFT JOIN pg_class c ON c.relfilenode = b.relfilenode
    GROUP BY 1 ORDER BY sum(r.record_length) DESC`.execute(db);
  const per = (value: string) => Number(value) / operations;
  const total = rows.reduce((sum, r) => sum + Number(r.bytes), 0);
  const fpi = rows.reduce((sum, r) => sum + Number(r.fpi), 0);
  const shown = rows
    .filter((r) => per(r.bytes) >= 20)
    .map(
      (r) =>
        `${r.relation} ${Math.round(per(r.bytes))} B${Number(r.fpi) > 0 ? ` (FPI ${Math.round(per(r.fpi))})` : ''} ×${per(r.records).toFixed(1)}`,
    );
  const types = await db.executeQuery<WalRecordType>(
    CompiledQuery.raw(WAL_BY_RECORD_TYPE, [before.walLsn, after.walLsn]),
  );
  const records = types.rows.reduce((sum, r) => sum + Number(r.records), 0);
  // Each record once, by its kind: how many an operation logs, and what each kind weighs on average (the
  // smallest each can be is measured by npm run bench:wal-floor)
  const byType = types.rows
    .filter((r) => per(r.bytes) >= 20)
    .map((r) => `${r.type} ${Math.round(per(r.bytes))} B ×${per(r.records).toFixed(1)}`);
  return (
    `WAL by relation per op (records counted at each block they touch; ${Math.round(total / operations)} B, FPI ${Math.round(fpi / operations)} B): ${shown.join(', ')}\n` +
    `    WAL by record type per op (${(records / operations).toFixed(1)} records): ${byType.join(', ')}`
  );
}

/**
 * Rows per operation between two readings, as `table: +inserted ~updated -deleted`, then the WAL per
 * operation. Operations are counted by the rows inserted into the path's own table (one per operation), so
 * warm-up and stragglers count too; tables written less than once per 20 operations are left out. The
 * WAL is all the cluster wrote between the readings (the sweeps' writes too, which are few).
 */
export function writesPerOperation(before: TableWrites, after: TableWrites, primaryTable: string): string {
  const delta = (table: string, key: keyof Counters) =>
    (after.tables.get(table)?.[key] ?? 0) - (before.tables.get(table)?.[key] ?? 0);
  const operations = operationsBetween(before, after, primaryTable);
  const parts: string[] = [];
  for (const table of [...after.tables.keys()].sort()) {
    const rate = (key: keyof Counters) => Math.round((delta(table, key) / operations) * 100) / 100;
    const [ins, upd, del] = [rate('inserted'), rate('updated'), rate('deleted')];
    if (ins + upd + del < 0.05) continue;
    const shown = [ins >= 0.05 ? `+${ins}` : '', upd >= 0.05 ? `~${upd}` : '', del >= 0.05 ? `-${del}` : ''];
    parts.push(`${table} ${shown.filter(Boolean).join(' ')}`);
  }
  const wal = (after.walBytes - before.walBytes) / operations;
  return `${parts.join(', ')}; WAL ${(wal / 1024).toFixed(1)} KiB`;
}
