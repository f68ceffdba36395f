// Rows written per operation, per table, from Postgres's own counters: the check that a floor writes what
// its path writes (the same tables, as many rows), printed beside the figures.
import { sql } from 'kysely';
import type { Db } from '../packages/server/src/platform/db/database.ts';

interface Counters {
  inserted: number;
  updated: number;
  deleted: number;
}
export type TableWrites = Map<string, Counters>;

/** Rows inserted, updated and deleted so far, by table (counters of committed work). */
export async function tableWrites(db: Db): Promise<TableWrites> {
  // A backend publishes its counters within 10 s of going idle: wait for the last operations' to land.
  await new Promise((resolve) => setTimeout(resolve, 11_000));
  const { rows } = await sql<{ relname: string; ins: string; upd: string; del: string }>`
    SELECT relname, n_tup_ins::text AS ins, n_tup_upd::text AS upd, n_tup_del::text AS del
    FROM pg_stat_user_tables`.execute(db);
  return new Map(
    rows.map((r) => [r.relname, { inserted: Number(r.ins), updated: Number(r.upd), deleted: Number(r.del) }]),
  );
}

/**
 * Rows per operation between two readings, as `table: +inserted ~updated -deleted`. Operations are
 * counted by the rows inserted into the path's own table (one per operation), so warm-up and stragglers
 * count too; tables written less than once per 20 operations are left out.
 */
export function writesPerOperation(before: TableWrites, after: TableWrites, primaryTable: string): string {
  const delta = (table: string, key: keyof Counters) =>
    (after.get(table)?.[key] ?? 0) - (before.get(table)?.[key] ?? 0);
  const operations = Math.max(1, delta(primaryTable, 'inserted'));
  const parts: string[] = [];
  for (const table of [...after.keys()].sort()) {
    const rate = (key: keyof Counters) => Math.round((delta(table, key) / operations) * 100) / 100;
    const [ins, upd, del] = [rate('inserted'), rate('updated'), rate('deleted')];
    if (ins + upd + del < 0.05) continue;
    const shown = [ins >= 0.05 ? `+${ins}` : '', upd >= 0.05 ? `~${upd}` : '', del >= 0.05 ? `-${del}` : ''];
    parts.push(`${table} ${shown.filter(Boolean).join(' ')}`);
  }
  return parts.join(', ');
}
