// Runs a business step in one transaction, then tells interested parties (the webhook worker) that
// something committed, so a delivery does not wait for the next poll.
import type { Db, Tx } from './database.ts';

export type Transact = <T>(step: (tx: Tx) => Promise<T>) => Promise<T>;

export function createTransact(db: Db, afterCommit: () => void): Transact {
  return async (step) => {
    const result = await db.transaction().execute(step);
    afterCommit();
    return result;
  };
}

/**
 * Runs one step per row, each in its own transaction (a sweep must not let one bad row hold back the
 * rest); answers how many steps reported a change.
 */
export async function transactEach<T>(
  transact: Transact,
  rows: T[],
  step: (tx: Tx, row: T) => Promise<boolean>,
): Promise<number> {
  let changed = 0;
  for (const row of rows) {
    if (await transact((tx) => step(tx, row))) changed++;
  }
  return changed;
}
