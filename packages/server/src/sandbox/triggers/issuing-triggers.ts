// Triggers of the card issuing API's events, for a partner: a customer registered by the partner and
// approved by the KYC vendor, an EUR account funded by a bank topup, a virtual card, and the card network
// authorizing, clearing or reversing a payment of it — each step through the issuing services, as the
// partner's calls and the sandbox routes make them.

import type { AccountsService } from '../../issuing/accounts/accounts-service.ts';
import type { AuthService } from '../../issuing/auth/auth-service.ts';
import type { CardsService } from '../../issuing/cards/cards-service.ts';
import type { IssuingDisputesService } from '../../issuing/disputes/disputes-service.ts';
import type { CustomerRef, KycService } from '../../issuing/kyc/kyc-service.ts';
import type { TopupsService } from '../../issuing/topups/topups-service.ts';
import type { TransactionsService as IssuingTransactionsService } from '../../issuing/transactions/transactions-service.ts';
import type { Db } from '../../platform/db/database.ts';
import { notFound } from '../../platform/errors/domain-error.ts';
import { ClientAmount } from '../../platform/money/amount.ts';
import type { PartnersService } from '../../platform/tenants/partners-service.ts';
import { type Trigger, type TriggerClock, triggerRef } from './trigger-context.ts';

export interface IssuingTriggerServices {
  db: Db;
  partners: PartnersService;
  auth: AuthService;
  kyc: KycService;
  accounts: AccountsService;
  cards: CardsService;
  topups: TopupsService;
  transactions: IssuingTransactionsService;
  disputes: IssuingDisputesService;
  clock: TriggerClock;
}

type IssuingTrigger = Trigger<IssuingTriggerServices>;

async function aCustomer(s: IssuingTriggerServices, partnerId: string, approve = true): Promise<CustomerRef> {
  const partner = await s.partners.get(s.db, partnerId).catch(() => {
    throw notFound('partner');
  });
  const { customerId } = await s.auth.registerByPartner(partner, { userId: triggerRef('trigger') });
  if (approve) await s.kyc.decide(customerId, { status: 'approved' });
  return { customerId, partnerId: partner.id };
}

/** An approved customer with an EUR account funded by a completed bank topup, and a virtual card. */
async function aCardholder(s: IssuingTriggerServices, partnerId: string) {
  const customer = await aCustomer(s, partnerId);
  const account = await s.accounts.open(customer, 'EUR');
  const topup = await s.topups.createFiat(customer, {
    accountId: account.accountId,
    amount: ClientAmount.read('100.00'),
  });
  await s.topups.complete(topup.topupId);
  const card = await s.cards.issue(customer, { isVirtual: true, currency: 'EUR' });
  return { customer, accountId: account.accountId, cardId: card.cardId };
}

async function aPayment(s: IssuingTriggerServices, partnerId: string, threeDS = false) {
  const holder = await aCardholder(s, partnerId);
  const transaction = await s.transactions.authorize({
    cardId: holder.cardId,
    amount: ClientAmount.read('12.50'),
    currency: 'EUR',
    merchant: 'Sandbox Coffee',
    mcc: '5814',
    merchantCountry: 'DE',
    merchantId: 'sandbox-coffee',
    channel: 'ecommerce',
    threeDS,
  });
  return { ...holder, transaction };
}

/** What a payment trigger made: its customer, card and transaction. */
const paymentIds = (p: Awaited<ReturnType<typeof aPayment>>) => ({
  customerId: p.customer.customerId,
  cardId: p.cardId,
  transactionId: p.transaction.transactionId,
});

/** A payment cleared and disputed by the partner for goods not received. */
async function aDispute(s: IssuingTriggerServices, partnerId: string) {
  const p = await aPayment(s, partnerId);
  await s.transactions.clear(p.transaction.transactionId);
  const dispute = await s.disputes.open(partnerId, p.transaction.transactionId, {
    reason: 'not_received',
    amount: ClientAmount.read('12.50'),
  });
  return { ...p, dispute };
}

export const ISSUING_TRIGGERS: Record<string, IssuingTrigger> = {
  kycStatusChanged: {
    api: 'issuing',
    description: 'a customer registered by the partner, approved by the KYC vendor',
    async run(s, partnerId) {
      return { customerId: (await aCustomer(s, partnerId)).customerId };
    },
  },
  topupCreated: {
    api: 'issuing',
    description: 'a bank topup of 100.00 EUR started for a new customer’s account',
    async run(s, partnerId) {
      const customer = await aCustomer(s, partnerId);
      const account = await s.accounts.open(customer, 'EUR');
      const topup = await s.topups.createFiat(customer, {
        accountId: account.accountId,
        amount: ClientAmount.read('100.00'),
      });
      return { customerId: customer.customerId, accountId: account.accountId, topupId: topup.topupId };
    },
  },
  topupStatusChanged: {
    api: 'issuing',
    description: 'a bank topup the bank confirms: the account is credited',
    async run(s, partnerId) {
      const customer = await aCustomer(s, partnerId);
      const account = await s.accounts.open(customer, 'EUR');
      const topup = await s.topups.createFiat(customer, {
        accountId: account.accountId,
        amount: ClientAmount.read('100.00'),
      });
      await s.topups.complete(topup.topupId);
      return { customerId: customer.customerId, accountId: account.accountId, topupId: topup.topupId };
    },
  },
  cardStatusChanged: {
    api: 'issuing',
    description: 'a virtual card issued to a funded, approved customer',
    async run(s, partnerId) {
      const holder = await aCardholder(s, partnerId);
      return { customerId: holder.customer.customerId, cardId: holder.cardId };
    },
  },
  transactionCreated: {
    api: 'issuing',
    description: 'the card network authorizes a 12.50 EUR payment of the card',
    async run(s, partnerId) {
      const p = await aPayment(s, partnerId);
      return paymentIds(p);
    },
  },
  transactionSettled: {
    api: 'issuing',
    description: 'an authorized payment cleared (settled) by the network',
    async run(s, partnerId) {
      const p = await aPayment(s, partnerId);
      await s.transactions.clear(p.transaction.transactionId);
      return paymentIds(p);
    },
  },
  transactionStatusChanged: {
    api: 'issuing',
    description: 'an authorized payment reversed by the merchant: its hold released',
    async run(s, partnerId) {
      const p = await aPayment(s, partnerId);
      await s.transactions.reverse(p.transaction.transactionId);
      return paymentIds(p);
    },
  },
  disputeCreated: {
    api: 'issuing',
    description:
      'the partner disputes a cleared payment (not_received): the account is credited provisionally',
    async run(s, partnerId) {
      const p = await aDispute(s, partnerId);
      return { ...paymentIds(p), disputeId: p.dispute.disputeId };
    },
  },
  disputeStatusChanged: {
    api: 'issuing',
    description: 'the card network decides a cardholder dispute: won, the provisional credit kept',
    async run(s, partnerId) {
      const p = await aDispute(s, partnerId);
      await s.disputes.decide(p.dispute.disputeId, 'won');
      return { ...paymentIds(p), disputeId: p.dispute.disputeId };
    },
  },
  transaction3dsRequested: {
    api: 'issuing',
    description: 'a payment the network sends to 3-D Secure: the cardholder is asked to confirm',
    async run(s, partnerId) {
      const p = await aPayment(s, partnerId, true);
      return paymentIds(p);
    },
  },
  transaction3dsCompleted: {
    api: 'issuing',
    description: 'a 3-D Secure challenge the cardholder approves (authType pinCode)',
    async run(s, partnerId) {
      const p = await aPayment(s, partnerId, true);
      const authId = p.transaction.threeDS?.transactionAuthId;
      if (!authId) throw new Error('the network asked no challenge');
      await s.transactions.decideChallenge(p.customer, authId, {
        authType: 'pinCode',
        authStatus: 'success',
      });
      return paymentIds(p);
    },
  },
};
