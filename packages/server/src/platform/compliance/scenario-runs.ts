// The sweep scenarios' walk through time (docs/compliance.md, Monitoring; migration 0069): each slice after
// the scenario's cursor is judged in one transaction with the cursor's advance, so its alerts and the
// advance commit together. A run judges slices until it is caught up or its time is spent (a sweep behind
// after a stop catches up in a few runs, never in one long one); another process judging the same
// scenario holds its row, and this one skips the round.
import type { Clock } from '../clock/clock.ts';
import type { Db, Tx } from '../db/database.ts';
import type { ComplianceCases } from './compliance-cases.ts';

/** What a sweep scenario is built with: its settings undefined when it is off */
export interface ScenarioSweepDeps<Settings> {
  db: Db;
  clock: Clock;
  cases: Pick<ComplianceCases, 'raiseScenario'>;
  settings: Settings | undefined;
}

const DAY_MS = 86_400_000;

/** Whole UTC days, one a slice, up to the start of today; a first run judges yesterday */
export function wholeDays(now: Date): { start: Date; end: Date; maxMs: number } {
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  return { start: new Date(today - DAY_MS), end: new Date(today), maxMs: DAY_MS };
}

/** A run's time for judging slices: the other sweeps wait behind it */
const ROUND_MS = 500;

export async function judgeSlices(
  db: Db,
  scenario: string,
  slice: {
    /** Where a scenario judged for the first time starts (not the whole history) */
    start: Date;
    /** How far a slice may reach now (the latest whose outcome is known) */
    end: Date;
    maxMs: number;
  },
  /** Answers the alerts raised, or 'not_yet' when what the slice needs is not there yet (the cursor stays) */
  judge: (tx: Tx, from: Date, to: Date) => Promise<number | 'not_yet'>,
): Promise<number> {
  const started = Date.now();
  // Caught up, as most runs are: one read, no lock taken (a row lock is a write)
  const known = await db
    .selectFrom('compliance_scenario_runs')
    .select('through')
    .where('scenario', '=', scenario)
    .executeTakeFirst();
  if (known && known.through >= slice.end) return 0;
  if (!known) {
    await db
      .insertInto('compliance_scenario_runs')
      .values({ scenario, through: slice.start })
      .onConflict((oc) => oc.column('scenario').doNothing())
      .execute();
  }
  let raised = 0;
  while (Date.now() - started < ROUND_MS) {
    const judged = await db.transaction().execute(async (tx) => {
      const row = await tx
        .selectFrom('compliance_scenario_runs')
        .select('through')
        .where('scenario', '=', scenario)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (!row || row.through >= slice.end) return undefined;
      const to = new Date(Math.min(slice.end.getTime(), row.through.getTime() + slice.maxMs));
      const outcome = await judge(tx, row.through, to);
      if (outcome === 'not_yet') return undefined;
      await tx
        .updateTable('compliance_scenario_runs')
        .set({ through: to })
        .where('scenario', '=', scenario)
        .execute();
      return outcome;
    });
    if (judged === undefined) break;
    raised += judged;
  }
  return raised;
}
