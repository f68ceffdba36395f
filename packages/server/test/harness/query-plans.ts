// The plan of a read with sequential scans priced out, for the tests that hold a read to its index: an
// expression index (a hash of what a read names) serves only the reads that name its very expression, and
// a read that stops naming it still answers right, just by scanning the table.
import { CompiledQuery, sql } from 'kysely';
import type { Db } from '../../src/platform/db/database.ts';

/** EXPLAIN's lines for the query, in a transaction where `enable_seqscan` is off */
export async function planWithoutSeqScans(db: Db, query: CompiledQuery): Promise<string[]> {
  return db.transaction().execute(async (tx: Db) => {
    await sql`SET LOCAL enable_seqscan = off`.execute(tx);
    const { rows } = await tx.executeQuery<{ 'QUERY PLAN': string }>(
      CompiledQuery.raw(`EXPLAIN ${query.sql}`, [...query.parameters]),
    );
    return rows.map((r) => r['QUERY PLAN']);
  });
}

/** The indexes the plan searches with a condition on a hashtextextended() expression */
export function hashSearched(plan: string[]): string[] {
  return plan.flatMap((line, i) => {
    const found = /(?:Index|Bitmap Index) Scan (?:Backward )?(?:using|on) (\w+)/.exec(line)?.[1];
    return found && /Index Cond: \(+hashtextextended/.test(plan[i + 1] ?? '') ? [found] : [];
  });
}

/** The indexes a read searches by a hash, planned with sequential scans priced out */
export async function searchedByHash(db: Db, query: CompiledQuery): Promise<string[]> {
  return hashSearched(await planWithoutSeqScans(db, query));
}
