// The bank as ISO 20022 files (docs/payouts.md, Bank files): pain.001 written to the outbox
// (bank-outbox.ts), pain.002 and camt.053/camt.054 read from the inbox (bank-inbox.ts). Payouts the
// simulator sent before the operator switched to files finish as the simulator promised: paid on their
// arrival day.
import { BankInbox } from './bank-inbox.ts';
import { BankOutbox } from './bank-outbox.ts';
import { arriveSimulated } from './bank-simulator.ts';
import type { Iso20022Deps } from './iso20022-deps.ts';
import type { BankRail } from './port.ts';
import { bookPayout } from './sandbox-booking.ts';

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
