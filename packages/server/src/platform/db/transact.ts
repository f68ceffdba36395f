// Runs a business step in one transaction. Inside a unit of work (a request with an Idempotency-Key) the
// step is a savepoint of the unit's transaction. Work to do once it is committed (waking the webhook
// worker for a job it queued) is registered with afterCommit (connection-scope.ts).
import type { TransactionSettings } from 'kysely';
import { inTransactionScope } from './connection-scope.ts';
import type { Db, Tx } from './database.ts';

export type Transact = <T>(step: (tx: Tx) => Promise<T>) => Promise<T>;

export function createTransact(db: Db): Transact {
  return (step) => runTransaction(db, step);
}

/**
 * Every transaction goes through here, so the driver knows which connection the transaction holds and
 * can refuse a second one from inside it.
 */
export function runTransaction<T>(
  db: Db,
  step: (tx: Tx) => Promise<T>,
  settings: Pick<TransactionSettings, 'isolationLevel'> = {},
): Promise<T> {
  return inTransactionScope(() => {
    const builder = db.transaction();
    return (settings.isolationLevel ? builder.setIsolationLevel(settings.isolationLevel) : builder).execute(
      step,
    );
  });
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
