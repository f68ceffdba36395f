// bench:scale's compliance sweeps on the year of data (docs/compliance.md, On a large database): each
// monitoring sweep that reads a range of the APIs' history, run as the server runs it — the scenario's
// cursor reset so that it judges yesterday — the median of RUNS runs, ms; and the many-cards read a card
// issue does, in a transaction rolled back. The year's card transactions are one cardholder's (the scene
// has one), so the cardholders' rollup is given CARDHOLDERS more, each with 90 ordinary days and a
// yesterday, for the judging of a busy day to be measured too.

import { sql } from 'kysely';
import { CardMonitoring } from '../packages/server/src/issuing/cards/card-monitoring.ts';
import { cardholderVolumeSweep } from '../packages/server/src/issuing/cards/cardholder-volume.ts';
import { refundsOverCapturesSweep } from '../packages/server/src/payments/transactions/refund-monitoring.ts';
import { systemClock } from '../packages/server/src/platform/clock/clock.ts';
import { ComplianceCases } from '../packages/server/src/platform/compliance/compliance-cases.ts';
import { ComplianceHolds } from '../packages/server/src/platform/compliance/compliance-holds.ts';
import { openDatabase } from '../packages/server/src/platform/db/database.ts';

const RUNS = 5;
const CARDHOLDERS = 20_000;
const DAY_MS = 86_400_000;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

export async function measureSweeps(databaseUrl: string): Promise<Record<string, string>> {
  const handle = openDatabase(databaseUrl, { max: 2 });
  const { db } = handle;
  const clock = systemClock;
  const cases = new ComplianceCases({ clock, holds: new ComplianceHolds(clock), fourEyes: 'off' });
  const timed = async (scenario: string, run: () => Promise<number>) => {
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      await db.deleteFrom('compliance_scenario_runs').where('scenario', '=', scenario).execute();
      const started = performance.now();
      await run();
      times.push(performance.now() - started);
    }
    return median(times);
  };
  try {
    // The windows the sweeps judge: yesterday (UTC), and the 30 days that end with it
    const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const counted = async (table: 'payments_transactions' | 'issuing_transactions', days: number) =>
      Number(
        (
          await db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<string>().as('n'))
            .where('created_at', '>=', new Date(today - days * DAY_MS))
            .where('created_at', '<', new Date(today))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const yesterday = new Date(today - DAY_MS).toISOString().slice(0, 10);
    await sql`
      INSERT INTO issuing_cardholder_daily_spend (customer_id, currency, day, partner_id, spent, payments)
      SELECT 'bench-' || c, 'EUR', ${yesterday}::date - d, 'bench', 2000 + (c % 7) * 100, 1
      FROM generate_series(1, ${CARDHOLDERS}::int) c, generate_series(0, 90) d`.execute(db);
    await sql`ANALYZE issuing_cardholder_daily_spend`.execute(db);
    const refunds = await timed(
      'refunds_over_captures',
      refundsOverCapturesSweep({ db, clock, cases, settings: { count: 3, days: 30 } }),
    );
    const cardholders = await timed(
      'unusual_volume:cardholders',
      cardholderVolumeSweep({ db, clock, cases, settings: { factor: 5, minimum: 1000 } }),
    );
    const holder = await db
      .selectFrom('issuing_cards')
      .select(['customer_id', 'partner_id'])
      .executeTakeFirstOrThrow();
    const monitoring = new CardMonitoring({ clock, cases, manyCards: { count: 5, days: 30 } });
    const issued: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      await db
        .transaction()
        .execute(async (tx) => {
          await monitoring.issued(tx, { customerId: holder.customer_id, partnerId: holder.partner_id });
          throw new Error('rolled back');
        })
        .catch(() => undefined);
      issued.push(performance.now() - started);
    }
    return {
      'refunds over captures, one day judged (a 30-day window)': `${refunds.toFixed(1)} ms over ${(await counted('payments_transactions', 30)).toLocaleString('en')} payments transactions`,
      'a cardholder’s unusual volume, one day summed and judged': `${cardholders.toFixed(1)} ms: ${(await counted('issuing_transactions', 1)).toLocaleString('en')} card transactions of the day summed, ${(CARDHOLDERS + 1).toLocaleString('en')} cardholders judged against 90 days each`,
      'many cards, the read a card issue adds (in a transaction)': `${median(issued).toFixed(1)} ms`,
    };
  } finally {
    await handle.close();
  }
}
