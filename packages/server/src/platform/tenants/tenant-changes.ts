// After a change to a tenant's credentials or settings (a key revoked, a key rotated, a URL changed),
// the caller's next request must meet the change on every process, not only this one. Postgres tells
// every process at commit (migration 0025) and each records what it heard; this waits until all live
// processes have, so a revocation answers only once the key is refused everywhere.
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { CURRENT_TENANT_CHANGE, PROCESS_TTL_SECONDS } from '../cluster/process-registry.ts';
import { whenCommitted } from '../db/connection-scope.ts';
import type { Db } from '../db/database.ts';

/** How long a change waits for every process to hear of it (a process that never does drops its cache within its TTL). */
const HEARD_TIMEOUT_MS = 2000;

/**
 * Returns once every live process has heard of every tenant change committed so far, or after
 * HEARD_TIMEOUT_MS (logged). Inside a unit of work it waits at the unit's commit, before the answer.
 */
export function tenantChangeSettled(db: Db, logger?: Pick<Logger, 'warn'>): Promise<void> {
  return whenCommitted(async () => {
    if (!(await everyProcessHeard(db, HEARD_TIMEOUT_MS))) {
      logger?.warn('a process did not hear of a tenant change in time; its cache lapses within its TTL');
    }
  });
}

/** Whether every live process heard of every tenant change committed so far, waiting up to `timeoutMs` */
export async function everyProcessHeard(db: Db, timeoutMs: number): Promise<boolean> {
  const { rows } = await sql<{ version: string }>`SELECT (${CURRENT_TENANT_CHANGE})::text AS version`.execute(
    db,
  );
  const version = rows[0]?.version ?? '0';
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const behind = await db
      .selectFrom('tessera_processes')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('seen_at', '>', sql<Date>`now() - make_interval(secs => ${PROCESS_TTL_SECONDS})`)
      .where('tenants_version', '<', version)
      .executeTakeFirstOrThrow();
    if (Number(behind.n) === 0) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
