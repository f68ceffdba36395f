// Fiat topups paid by card on the hosted topup page: the platform's own acquiring, i.e. the card network
// rail (test cards, 3D Secure on the hosted ACS page, on-us cards included). An approved payment is
// captured with its approval and credits the account through the ledger in the same transaction; a
// declined one leaves the topup payable (by another card, or by the bank transfer).
import type { Clock } from '../../platform/clock/clock.ts';
import type { Tx } from '../../platform/db/database.ts';
import type { Transact } from '../../platform/db/transact.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { uuidv7 } from '../../platform/ids.ts';
import type {
  CardDetails,
  CardNetwork,
  ChallengeRedirect,
  DeclineReason,
  NetworkNews,
} from '../../rails/card-network/port.ts';
import type { TopupRow, TopupsService } from './topups-service.ts';

export const CARD_TOPUP_OWNER = 'issuing-topups';
const ACQUIRING = { ownerType: 'issuing_card_acquiring', ownerId: 'card-network' };

const DECLINE_TEXT: Partial<Record<DeclineReason, string>> = {
  insufficient_funds: 'The card has insufficient funds.',
  expired_card: 'The card has expired.',
  authentication_failed: '3D Secure authentication failed.',
  soft_decline: 'The card was declined.',
};

export type CardTopupResult =
  | { outcome: 'completed' }
  | { outcome: 'challenge'; redirect: ChallengeRedirect }
  | { outcome: 'declined'; message: string };

export class CardTopups {
  constructor(
    private readonly deps: {
      transact: Transact;
      clock: Clock;
      network: CardNetwork;
      topups: TopupsService;
      publicUrl: string;
    },
  ) {}

  /** The hosted page's card (checked there, topup-card-form.ts): one attempt to pay the topup by card. */
  async pay(paymentToken: string, card: CardDetails): Promise<CardTopupResult> {
    return this.deps.transact(async (tx) => {
      const topup = await this.payable(tx, paymentToken);
      const reference = `${CARD_TOPUP_OWNER}:${uuidv7()}`;
      await tx
        .updateTable('issuing_topups')
        .set({ network_reference: reference, last_decline: null })
        .where('id', '=', topup.id)
        .execute();
      const answer = await this.deps.network.authorize(tx, {
        owner: CARD_TOPUP_OWNER,
        reference,
        card,
        amount: BigInt(topup.amount),
        currency: topup.currency,
        merchant: 'Account topup',
        kind: 'purchase',
        initiator: 'customer',
        isAuthenticated: false,
        isSoftDeclineRetry: false,
        // A risk rule's challenge at issuing.topup (topup-risk.ts): 3-D Secure whatever the issuer chooses.
        challengeRequested: topup.risk_challenge,
        returnUrl: `${this.deps.publicUrl}/hosted/issuing/topups/${paymentToken}`,
        capture: true,
      });
      switch (answer.outcome) {
        case 'approved':
          await this.paid(tx, topup, reference, answer.captured);
          return { outcome: 'completed' };
        case 'challenge':
          return { outcome: 'challenge', redirect: answer.redirect };
        case 'declined':
          await this.declined(tx, topup, answer.reason);
          return { outcome: 'declined', message: DECLINE_TEXT[answer.reason] ?? 'The card was declined.' };
        case 'unknown':
          // The answer was lost; reconciliation completes (or declines) the topup shortly.
          return {
            outcome: 'declined',
            message: 'The payment is being confirmed; this page will show the result.',
          };
      }
    });
  }

  /** News of a card attempt: its challenge was decided, or its lost answer reconciled. */
  async onNetwork(tx: Tx, news: NetworkNews): Promise<void> {
    // A chargeback of a topup paid by card is not modelled: the account keeps what the topup credited.
    if (news.kind === 'chargeback') return;
    const topup = await this.deps.topups.lock(tx, 'network_reference', news.reference);
    if (topup?.status !== 'pending') return;
    if (news.outcome === 'approved') await this.paid(tx, topup, news.reference, news.captured ?? false);
    else await this.declined(tx, topup, news.reason ?? 'generic');
  }

  /** The topup behind a payment token, if it can still be paid by card. */
  private async payable(tx: Tx, paymentToken: string): Promise<TopupRow> {
    const id = this.deps.topups.topupOfPageToken(paymentToken);
    const topup = id ? await this.deps.topups.lock(tx, 'id', id) : undefined;
    if (topup?.kind !== 'fiat') throw new DomainError('not_found', 'topup not found');
    if (topup.status !== 'pending') {
      throw new DomainError('invalid_state', `the topup is ${topup.status}`, {
        details: { status: topup.status },
      });
    }
    return topup;
  }

  private async paid(tx: Tx, topup: TopupRow, reference: string, isCaptured: boolean): Promise<void> {
    if (!isCaptured) await this.deps.network.capture(tx, reference, BigInt(topup.amount));
    await this.deps.topups.credit(tx, topup, ACQUIRING, BigInt(topup.amount), { method: 'card' });
  }

  private async declined(tx: Tx, topup: TopupRow, reason: DeclineReason): Promise<void> {
    await tx.updateTable('issuing_topups').set({ last_decline: reason }).where('id', '=', topup.id).execute();
  }
}
