// Builds the payments API's services on the platform and its rails (card network, wallet tokens),
// connects them to the card network's news and registers their sweeps.

import type { Registry } from 'prom-client';
import type { Clock } from '../platform/clock/clock.ts';
import type { Sweeps } from '../platform/clock/sweeps.ts';
import type { Compliance } from '../platform/compliance/compliance.ts';
import type { CapabilityTokens } from '../platform/crypto/capability-tokens.ts';
import type { Encryptor } from '../platform/crypto/encryption.ts';
import type { Db } from '../platform/db/database.ts';
import type { Transact } from '../platform/db/transact.ts';
import type { Outbox } from '../platform/events/outbox.ts';
import type { Ledger } from '../platform/ledger/ledger.ts';
import type { TermsStore } from '../platform/payouts/terms.ts';
import type { Risk } from '../platform/risk/risk.ts';
import type { CardNetwork } from '../rails/card-network/port.ts';
import type { Notifier } from '../rails/notifier/port.ts';
import type { WalletPaymentTokens } from '../rails/wallet-tokenization/payment-tokens.ts';
import { StoredCardsService } from './cards/stored-cards-service.ts';
import { CheckoutSessions } from './checkout/checkout-sessions.ts';
import { CustomersService } from './customers/customers-service.ts';
import { PaymentDisputesService } from './disputes/disputes-service.ts';
import { PaymentLinksService } from './links/payment-links-service.ts';
import { PaymentOrdersService } from './orders/orders-service.ts';
import { ChargeRisk } from './risk/charge-risk.ts';
import { paymentsDisputeLabels } from './risk/dispute-labels.ts';
import { registerDisputeMetrics } from './risk/dispute-ratios.ts';
import { refundsOverCapturesSweep } from './transactions/refund-monitoring.ts';
import { NETWORK_OWNER, PaymentTransactionsService } from './transactions/transactions-service.ts';

export interface PaymentsPlatform {
  publicUrl: string;
  authorizationSeconds: number;
  /** The dispute fee a site pays with every chargeback, in major units */
  disputeFeeMajor: number;
  /** Common orders are written in one statement (default: true; false tests the general path against it) */
  oneStatementWrites?: boolean;
  db: Db;
  clock: Clock;
  transact: Transact;
  outbox: Outbox;
  ledger: Ledger;
  sweeps: Sweeps;
  encryptor: Encryptor;
  capabilities: CapabilityTokens;
  rails: { cardNetwork: CardNetwork; walletTokens: WalletPaymentTokens; notifier: Notifier };
  terms: TermsStore;
  risk: Pick<Risk, 'engine' | 'labels' | 'reviews' | 'ipCountry'>;
  metrics: { registry: Registry };
  /** The refunds-over-captures scenario's alerts (docs/compliance.md, Monitoring) */
  compliance: Pick<Compliance, 'cases' | 'aml' | 'profiles'>;
}

export interface PaymentsServices {
  customers: CustomersService;
  cards: StoredCardsService;
  orders: PaymentOrdersService;
  transactions: PaymentTransactionsService;
  disputes: PaymentDisputesService;
  links: PaymentLinksService;
  checkoutSessions: CheckoutSessions;
}

export function createPaymentsServices(p: PaymentsPlatform): PaymentsServices {
  const { db, clock, transact, outbox, ledger } = p;
  const customers = new CustomersService({ db, transact, clock });
  const cards = new StoredCardsService({ db, clock, encryptor: p.encryptor, network: p.rails.cardNetwork });
  const links = new PaymentLinksService({ db, clock, notifier: p.rails.notifier, publicUrl: p.publicUrl });
  // A backtest's labels at payments.charge are the merchant's disputes.
  p.risk.labels.set('payments.charge', paymentsDisputeLabels);
  // Each merchant's dispute ratios against the card schemes' monitoring levels (docs/risk.md, Monitoring).
  registerDisputeMetrics(p.metrics.registry, { db, clock });
  const risk = new ChargeRisk({
    engine: p.risk.engine,
    reviews: p.risk.reviews,
    network: p.rails.cardNetwork,
    encryptor: p.encryptor,
    clock,
    ipCountry: p.risk.ipCountry,
  });
  const transactions = new PaymentTransactionsService({
    db,
    transact,
    clock,
    ledger,
    network: p.rails.cardNetwork,
    publicUrl: p.publicUrl,
    capabilities: p.capabilities,
    authorizationSeconds: p.authorizationSeconds,
    terms: p.terms,
    risk,
  });
  // A charge held for review is captured when approved, voided when refused or expired.
  p.risk.reviews.outcomes.set('payments.charge', (tx, objectId, approved) =>
    transactions.reviewed(tx, Number(objectId), approved),
  );
  const orders = new PaymentOrdersService({
    db,
    transact,
    clock,
    outbox,
    cards,
    transactions,
    notifier: p.rails.notifier,
    links,
    risk,
    oneStatementWrites: p.oneStatementWrites ?? true,
    onboarding: p.compliance.profiles,
  });
  customers.onDelete = (tx, _merchantId, customerId) => orders.billing.endForDeletedCustomer(tx, customerId);
  p.rails.cardNetwork.connect(NETWORK_OWNER, (tx, news) => transactions.onNetwork(tx, news));
  // Recurring bills fall due on the clock; uncaptured authorizations lapse.
  p.sweeps.register('payments-recurring-billing', () => orders.billing.billDue(), {
    nextDue: () => orders.billing.nextBillDue(),
  });
  p.sweeps.register('payments-authorizations', () => transactions.expireAuthorizations());
  // Chargebacks: unanswered ones are lost at their deadline; those under review are decided on the clock.
  const disputes = new PaymentDisputesService({
    db,
    transact,
    clock,
    encryptor: p.encryptor,
    transactions,
    disputeFeeMajor: BigInt(p.disputeFeeMajor),
  });
  p.sweeps.register('payments-disputes', () => disputes.decideDue());
  p.sweeps.register(
    'aml-refunds-over-captures',
    refundsOverCapturesSweep({
      db,
      clock,
      cases: p.compliance.cases,
      settings: p.compliance.aml.refundsOverCaptures,
    }),
  );
  const checkoutSessions = new CheckoutSessions({ capabilities: p.capabilities, clock });
  return { customers, cards, orders, transactions, disputes, links, checkoutSessions };
}
