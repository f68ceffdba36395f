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
