// Builds the crypto merchant API's services on the platform and its rails (chain, FX, notifier),
// connects them to the chain rail's news and registers their sweeps.
import type { Clock } from '../platform/clock/clock.ts';
import type { Sweeps } from '../platform/clock/sweeps.ts';
import type { Compliance } from '../platform/compliance/compliance.ts';
import type { Db } from '../platform/db/database.ts';
import type { Transact } from '../platform/db/transact.ts';
import type { Outbox } from '../platform/events/outbox.ts';
import type { Ledger } from '../platform/ledger/ledger.ts';
import type { TermsStore } from '../platform/payouts/terms.ts';
import type { Risk } from '../platform/risk/risk.ts';
import type { StoresService } from '../platform/tenants/stores-service.ts';
import type { ChainRail } from '../rails/chain/port.ts';
import type { FxRates } from '../rails/fx/port.ts';
import type { Notifier } from '../rails/notifier/port.ts';
import { ORDER_REFERENCE, OrdersService } from './orders/orders-service.ts';
import { StoreSettlement } from './orders/store-settlement.ts';
import { QuotesService } from './quotes/quotes-service.ts';
import { REFUND_REFERENCE, RefundsService } from './refunds/refunds-service.ts';
import { SessionService } from './session/session-service.ts';

export interface CryptoPlatform {
  mode: 'sandbox' | 'production';
  publicUrl: string;
  db: Db;
  clock: Clock;
  transact: Transact;
  outbox: Outbox;
  ledger: Ledger;
  sweeps: Sweeps;
  stores: StoresService;
  rails: { chain: ChainRail; fx: FxRates; notifier: Notifier };
  terms: TermsStore;
  risk: Risk;
  /** Payers and refund addresses screened against OFAC's digital-currency addresses (docs/compliance.md) */
  compliance: Pick<Compliance, 'sanctions' | 'cases' | 'profiles'>;
}

export interface CryptoServices {
  sessions: SessionService;
  quotes: QuotesService;
  orders: OrdersService;
  refunds: RefundsService;
}

export function createCryptoServices(p: CryptoPlatform): CryptoServices {
  const { db, clock, transact, outbox, ledger, stores, publicUrl } = p;
  const { chain, fx, notifier } = p.rails;
  const quotes = new QuotesService({ db, clock, fx });
  const settlement = new StoreSettlement({ ledger, terms: p.terms, clock });
  const orders = new OrdersService({
    db,
    transact,
    clock,
    outbox,
    ledger,
    chain,
    fx,
    quotes,
    stores,
    settlement,
    publicUrl,
    risk: p.risk,
    onboarding: p.compliance.profiles,
    compliance: p.compliance,
  });
  const refunds = new RefundsService({
    db,
    transact,
    clock,
    outbox,
    ledger,
    chain,
    notifier,
    stores,
    settlement,
    publicUrl,
    risk: p.risk,
    compliance: p.compliance,
  });
  chain.connect(ORDER_REFERENCE, (tx, news) => orders.deposits.onChain(tx, news));
  chain.connect(REFUND_REFERENCE, (tx, news) => refunds.onChain(tx, news));
  // Orders nobody paid in time expire; refund proposals nobody accepted in 30 days expire.
  p.sweeps.register('crypto-orders', () => orders.deposits.expireDue());
  p.sweeps.register('crypto-refunds', () => refunds.expireDue());
  return {
    sessions: new SessionService({ db, transact, clock, stores, mode: p.mode }),
    quotes,
    orders,
    refunds,
  };
}
