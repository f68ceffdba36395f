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
  return config.rail === 'simulator'
    ? new BankSimulator(deps)
    : new Iso20022Bank({
        ...deps,
        debtor: config.debtor,
        outboxDir: config.outboxDir,
        inboxDir: config.inboxDir,
        onInboxFile: (outcome) => deps.metrics.bankInboxFiles.inc({ outcome }),
      });
}

/** The scheduled run and the bank's news, as sweeps (on the sandbox clock in the sandbox). */
export function registerPayoutSweeps(sweeps: Sweeps, payouts: PayoutsService, bank: BankRail): void {
  sweeps.register('payout-runs', async () => (await payouts.runDue()).length + (await bank.dispatch()));
  sweeps.register('bank-news', () => bank.collect());
}
