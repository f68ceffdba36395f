// The bank as ISO 20022 files (docs/payouts.md, Bank files): pain.001 written to the outbox
// (bank-outbox.ts), pain.002 and camt.053/camt.054 read from the inbox (bank-inbox.ts). Payouts the
// simulator sent before the operator switched to files finish as the simulator promised: paid on their
// arrival day.
import type { Logger } from 'pino';
import type { Clock } from '../../platform/clock/clock.ts';
import type { Encryptor } from '../../platform/crypto/encryption.ts';
import type { Db } from '../../platform/db/database.ts';
import type { Transact } from '../../platform/db/transact.ts';
import type { DebtorAccount } from '../../platform/payouts/money-out-config.ts';
import type { PayoutLifecycle } from '../../platform/payouts/payout-lifecycle.ts';
import { BankInbox } from './bank-inbox.ts';
import { BankOutbox } from './bank-outbox.ts';
import { arriveSimulated } from './bank-simulator.ts';
import type { BankRail } from './port.ts';
import { bookPayout } from './sandbox-booking.ts';

export interface Iso20022Deps {
  db: Db;
  transact: Transact;
  clock: Clock;
  encryptor: Encryptor;
  lifecycle: PayoutLifecycle;
  logger: Logger;
  debtor: DebtorAccount;
  outboxDir: string;
  inboxDir: string;
  /** Counts inbox files by outcome (metric) */
  onInboxFile?: (outcome: 'applied' | 'rejected' | 'unmatched') => void;
}

export class Iso20022Bank implements BankRail {
  readonly name = 'iso20022';
  private readonly outbox: BankOutbox;
  private readonly inbox: BankInbox;

  constructor(private readonly deps: Iso20022Deps) {
    this.outbox = new BankOutbox(deps);
    this.inbox = new BankInbox(deps);
  }

  dispatch(): Promise<number> {
    return this.outbox.dispatch();
  }

  async collect(): Promise<number> {
    return (await this.inbox.collect()) + (await arriveSimulated(this.deps));
  }

  book(payoutId: string): Promise<void> {
    return bookPayout(
      { ...this.deps, debtorIban: this.deps.debtor.iban, collect: () => this.collect() },
      payoutId,
    );
  }
}
