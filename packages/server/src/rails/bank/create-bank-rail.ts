// Picks the bank rail by configuration (TESSERA_BANK_RAIL) and registers its sweeps: the payout run
// (the schedule, then handing new payouts to the bank) and reading what the bank said.
import type { Logger } from 'pino';
import type { Clock } from '../../platform/clock/clock.ts';
import type { Sweeps } from '../../platform/clock/sweeps.ts';
import type { Encryptor } from '../../platform/crypto/encryption.ts';
import type { Db } from '../../platform/db/database.ts';
import type { Transact } from '../../platform/db/transact.ts';
import type { Metrics } from '../../platform/http/metrics.ts';
import type { MoneyOutConfig } from '../../platform/payouts/money-out-config.ts';
import type { PayoutLifecycle } from '../../platform/payouts/payout-lifecycle.ts';
import type { PayoutsService } from '../../platform/payouts/payouts-service.ts';
import { BankInbox } from './bank-inbox.ts';
import { BankSimulator } from './bank-simulator.ts';
import { Iso20022Bank } from './iso20022-bank.ts';
import type { BankRail } from './port.ts';

export function createBankRail(deps: {
  config: MoneyOutConfig['bank'];
  db: Db;
  transact: Transact;
  clock: Clock;
  encryptor: Encryptor;
  lifecycle: PayoutLifecycle;
  logger: Logger;
  metrics: Metrics;
}): BankRail {
  const { config } = deps;
  const files = {
    ...deps,
    debtor: config.debtor,
    outboxDir: config.outboxDir,
    inboxDir: config.inboxDir,
    onInboxFile: (outcome: 'applied' | 'rejected' | 'unmatched') =>
      deps.metrics.bankInboxFiles.inc({ outcome }),
  };
  return config.rail === 'simulator'
    ? new BankSimulator({ ...files, inbox: new BankInbox(files) })
    : new Iso20022Bank(files);
}

/**
 * At start: payouts still travelling on the rail the operator switched away from finish on it (the
 * simulator's on their arrival day, files by the bank's reports); say so once, with how many.
 */
export async function noteOtherRailsPayouts(
  db: Db,
  config: MoneyOutConfig['bank'],
  logger: Logger,
): Promise<number> {
  const row = await db
    .selectFrom('payouts')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('status', '=', 'in_transit')
    .where('bank_file_id', config.rail === 'simulator' ? 'is not' : 'is', null)
    .executeTakeFirstOrThrow();
  const count = Number(row.n);
  if (count === 0) return 0;
  if (config.rail === 'simulator') {
    logger.warn(
      { payouts: count, inboxDir: config.inboxDir },
      `${count} payouts sent as bank files are still in transit: TESSERA_BANK_RAIL=simulator keeps reading the bank's reports for them from the inbox until they finish`,
    );
  } else {
    logger.warn(
      { payouts: count },
      `${count} payouts the bank simulator sent are still in transit: they are paid on their arrival day, as the simulator promised; no bank file is written for them`,
    );
  }
  return count;
}

/** The scheduled run and the bank's news, as sweeps (on the sandbox clock in the sandbox). */
export function registerPayoutSweeps(sweeps: Sweeps, payouts: PayoutsService, bank: BankRail): void {
  // A tenant whose step throws is reported by the service (tessera_payout_run_failures_total) and tried
  // again next round; the round itself goes on for every other tenant.
  sweeps.register('payout-runs', async () => (await payouts.runDue()).made.length + (await bank.dispatch()));
  sweeps.register('bank-news', () => bank.collect());
}
