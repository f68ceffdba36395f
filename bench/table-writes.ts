// Rows written per operation, per table, from Postgres's own counters: the check that a floor writes what
// its path writes (the same tables, as many rows), printed beside the figures; and the WAL an operation
// makes, since every commit waits for its WAL to be flushed (the ceiling of a write path on many cores).
import { sql } from 'kysely';
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
}

/** Rows inserted, updated and deleted so far, by table (counters of committed work). */
export async function tableWrites(db: Db): Promise<TableWrites> {
  // A backend publishes its counters within 10 s of going idle: wait for the last operations' to land.
  await new Promise((resolve) => setTimeout(resolve, 11_000));
  const { rows } = await sql<{ relname: string; ins: string; upd: string; del: string }>`
    SELECT relname, n_tup_ins::text AS ins, n_tup_upd::text AS upd, n_tup_del::text AS del
    FROM pg_stat_user_tables`.execute(db);
  const wal = await sql<{ bytes: string }>`
    SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS bytes`.execute(db);
  return {
    tables: new Map(
      rows.map((r) => [
        r.relname,
        { inserted: Number(r.ins), updated: Number(r.upd), deleted: Number(r.del) },
      ]),
    ),
    walBytes: Number(wal.rows[0]?.bytes ?? 0),
  };
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
  const operations = Math.max(1, delta(primaryTable, 'inserted'));
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
