// The issuing side's face to the card network: a card this platform issued, charged through the payments
// API, is authorized here (balance hold, the cardholder's 3D Secure challenge in the issuing API), then
// cleared, reversed or credited, each inside the card network's transaction.
import type { Tx } from '../../platform/db/database.ts';
import type { CardDetails, DeclineReason, OnUsIssuer } from '../../rails/card-network/port.ts';
import type { CardsService } from '../cards/cards-service.ts';
import type { TransactionsService } from './transactions-service.ts';

const DECLINES: Record<string, DeclineReason> = {
  card_not_active: 'card_not_active',
  account_closed: 'card_not_active',
  currency_not_supported: 'currency_not_supported',
  amount_over_limit: 'amount_over_limit',
  insufficient_funds: 'insufficient_funds',
  // A card whose controls refuse the payment: the scheme's "do not honour", the control named only to the partner
  spending_control: 'generic',
  risk_declined: 'generic',
};

export class IssuingOnUsIssuer implements OnUsIssuer {
  constructor(
    private readonly bin: string,
    private readonly cards: CardsService,
    private readonly transactions: TransactionsService,
  ) {}

  issues(pan: string): boolean {
    return pan.startsWith(this.bin);
  }

  async authorize(
    tx: Tx,
    r: {
      reference: string;
      card: CardDetails;
      amount: bigint;
      currency: string;
      merchant: string;
      merchantId: string | null;
      mcc: string | null;
      merchantCountry: string | null;
      challenge: boolean;
    },
  ) {
    const cardId = await this.cards.matchCard(tx, r.card);
    if (!cardId) return { outcome: 'declined' as const, reason: 'invalid_card' as const };
    const t = await this.transactions.authorizeFromNetwork(tx, {
      cardId,
      currency: r.currency,
      amount: r.amount,
      merchant: r.merchant,
      // A payment on the payments API is a card-not-present one, at the site's category and country.
      merchantId: r.merchantId,
      mcc: r.mcc,
      merchantCountry: r.merchantCountry,
      channel: 'ecommerce',
      threeDS: r.challenge,
      networkReference: r.reference,
    });
    if (t.status === 'pending_3ds') return { outcome: 'challenge' as const };
    if (t.status === 'authorized') return { outcome: 'approved' as const };
    return { outcome: 'declined' as const, reason: DECLINES[t.declineReason ?? ''] ?? 'generic' };
  }

  capture(tx: Tx, reference: string, amount: bigint): Promise<void> {
    return this.transactions.settleFromNetwork(tx, reference, amount);
  }

  release(tx: Tx, reference: string): Promise<void> {
    return this.transactions.settleFromNetwork(tx, reference, null);
  }

  async credit(
    tx: Tx,
    r: {
      reference: string;
      refundOf?: string;
      card?: CardDetails;
      amount: bigint;
      currency: string;
      merchant: string;
    },
  ) {
    const cardId = r.refundOf
      ? await this.transactions.cardOfNetworkPayment(tx, r.refundOf)
      : r.card
        ? await this.cards.matchCard(tx, r.card)
        : undefined;
    if (!cardId) return { outcome: 'declined' as const, reason: 'invalid_card' as const };
    const result = await this.transactions.creditFromNetwork(tx, {
      cardId,
      currency: r.currency,
      amount: r.amount,
      merchant: r.merchant,
      networkReference: r.reference,
    });
    return typeof result === 'string'
      ? { outcome: 'declined' as const, reason: result }
      : { outcome: 'approved' as const };
  }
}
