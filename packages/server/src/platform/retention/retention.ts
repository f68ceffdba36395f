// Retention for the tables that only grow (docs/operations.md, Retention): what no one needs after a
// while is deleted by age, in batches, by the sweeps. Idempotency answers and tombstones and sent mail
// have their own sweeps (idempotency-keys, outbound-mail-retention); these are the rest.
import { sql } from 'kysely';
import { addSeconds, type Clock } from '../clock/clock.ts';
import type { Db } from '../db/database.ts';

/** Rows deleted per statement: a long backlog is cleared over several runs, never in one long lock */
const BATCH = 5_000;
/** Onboarding invitations are kept this long past their expiry: who was invited, when, by whom */
const INVITATION_DAYS = 90;
/** A tenant's minute roll-ups are kept a day past the longest velocity window */
const TENANT_MINUTES_DAYS = 31;

export function purgeOldRows(
  db: Db,
  clock: Clock,
  retention: { webhookAttemptDays: number; sandboxMessageDays: number; riskDays: number },
) {
  const before = (days: number) => addSeconds(clock.now(), -days * 86_400);
  return {
    /** Attempts of deliveries that succeeded, older than the retention; answers how many went. */
    async webhookAttempts(): Promise<number> {
      const { numAffectedRows } = await sql`
        DELETE FROM webhook_attempts WHERE id IN (
          SELECT a.id FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
          WHERE a.started_at < ${before(retention.webhookAttemptDays)} AND d.status = 'succeeded'
          LIMIT ${BATCH})`.execute(db);
      return Number(numAffectedRows ?? 0);
    },
    /** Risk signals and decisions (docs/risk.md), older than the retention (a backtest reaches this far), and minute roll-ups past the longest window. */
    async riskHistory(): Promise<number> {
      const cutoff = before(retention.riskDays);
      let deleted = 0;
      // By place: risk_signals has no key (migration 0083); a row moved meanwhile waits for the next run
      for (const table of ['risk_signals', 'risk_decisions']) {
        const { numAffectedRows } = await sql`
          DELETE FROM ${sql.table(table)} WHERE ctid = ANY(ARRAY(
            SELECT ctid FROM ${sql.table(table)} WHERE at < ${cutoff} LIMIT ${BATCH}))`.execute(db);
        deleted += Number(numAffectedRows ?? 0);
      }
      // A tenant's minute roll-ups: no window reads past 30 days (tenant-windows.ts)
      const { numAffectedRows } = await sql`
        DELETE FROM risk_signal_minutes WHERE (tenant, decision_point, minute, currency) IN (
          SELECT tenant, decision_point, minute, currency FROM risk_signal_minutes
          WHERE minute < ${before(TENANT_MINUTES_DAYS)} LIMIT ${BATCH})`.execute(db);
      return deleted + Number(numAffectedRows ?? 0);
    },
    /** The sandbox's mail and SMS inbox, older than the retention. */
    async sandboxMessages(): Promise<number> {
      const { numAffectedRows } = await sql`
        DELETE FROM sandbox_messages WHERE id IN (
          SELECT id FROM sandbox_messages WHERE created_at < ${before(retention.sandboxMessageDays)} LIMIT ${BATCH})`.execute(
        db,
      );
      return Number(numAffectedRows ?? 0);
    },
    /** Onboarding invitations expired more than 90 days ago (docs/compliance.md, Onboarding). */
    async onboardingInvitations(): Promise<number> {
      const { numAffectedRows } = await sql`
        DELETE FROM onboarding_invitations WHERE id IN (
          SELECT id FROM onboarding_invitations WHERE expires_at < ${before(INVITATION_DAYS)} LIMIT ${BATCH})`.execute(
        db,
      );
      return Number(numAffectedRows ?? 0);
    },
  };
}
