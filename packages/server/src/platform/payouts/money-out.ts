// Money out's services as the APIs receive them (docs/payouts.md). The bank rail that sends the payouts
// is added by those that drive it (rails/bank/port.ts, MoneyOutWithBank).
import type { PayoutLifecycle } from './payout-lifecycle.ts';
import type { PayoutsService } from './payouts-service.ts';
import type { TermsStore } from './terms.ts';

export interface MoneyOut {
  terms: TermsStore;
  payouts: PayoutsService;
  lifecycle: PayoutLifecycle;
}
