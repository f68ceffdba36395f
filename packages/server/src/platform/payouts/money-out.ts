// Money out's services as the APIs receive them (docs/payouts.md).
import type { BankRail } from '../../rails/bank/port.ts';
import type { PayoutLifecycle } from './payout-lifecycle.ts';
import type { PayoutsService } from './payouts-service.ts';
import type { TermsStore } from './terms.ts';

export interface MoneyOut {
  terms: TermsStore;
  payouts: PayoutsService;
  lifecycle: PayoutLifecycle;
  bank: BankRail;
}
