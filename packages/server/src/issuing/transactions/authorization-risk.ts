// The issuing.authorization decision point (docs/risk.md): every authorization of an issued card — the card
// network's and the on-us one — is one signal, decided by its partner's and the platform's rules. A decline
// is the issuing wire's declined transaction (`risk_declined`, no rule named to the cardholder); a challenge
// asks the cardholder for 3-D Secure where the network did not.
import { daysSince } from '../../platform/clock/clock.ts';
import type { Executor } from '../../platform/db/database.ts';
import type { StatementBatch } from '../../platform/db/statement-batch.ts';
import type { DisputeLabels } from '../../platform/risk/backtest.ts';
import {
  type RiskEngine,
  type Signal,
  stageDecisions,
  stageSignal,
  type Verdict,
} from '../../platform/risk/risk-engine.ts';
import { type Prejudged, prejudge } from '../../platform/risk/velocity-guard.ts';
import type { MerchantFacts } from './transaction.ts';

export const partnerTenant = (partnerId: string) => `partner:${partnerId}`;

/** A backtest's labels at issuing.authorization: the partner's cardholder disputes, fraud or not */
export const issuingDisputeLabels: DisputeLabels = async (db, tenant, since) => {
  const rows = await db
    .selectFrom('issuing_disputes')
    .select(['transaction_id', 'reason'])
    .where('partner_id', '=', tenant.slice('partner:'.length))
    .where('created_at', '>=', since)
    .execute();
  return new Map(rows.map((r) => [r.transaction_id, r.reason === 'fraud' ? 'fraud' : 'other']));
};

/** The card as the rules see it */
export interface CardOnSignal {
  id: string;
  customer_id: string;
  partner_id: string;
  account_id: string;
  pan_fingerprint: string;
  customer_since: Date;
  account_since: Date;
  /** The cardholder's country of residence, from their approved KYC ("" when none) */
  customer_country: string;
}

export class AuthorizationRisk {
  constructor(private readonly engine: RiskEngine) {}

  /** The authorization as the rules see it, counted by its card and its cardholder. */
  signal(
    card: CardOnSignal,
    request: MerchantFacts & { amount: bigint; currency: string; threeDS: boolean },
    at: Date,
  ): Signal {
    return this.engine.complete({
      point: 'issuing.authorization',
      tenant: partnerTenant(card.partner_id),
      at,
      amount: request.amount,
      currency: request.currency,
      keys: { ip: null, email: null, cardFingerprint: card.pan_fingerprint, customerId: card.customer_id },
      attributes: {
        amount: request.amount,
        currency: request.currency,
        issuing: {
          mcc: request.mcc ?? '',
          merchant_country: request.merchantCountry ?? '',
          merchant_id: request.merchantId ?? '',
          merchant_name: request.merchant,
          channel: request.channel,
          three_ds: request.threeDS,
        },
        card: { id: card.id, fingerprint: card.pan_fingerprint },
        customer: {
          id: card.customer_id,
          age_days: daysSince(card.customer_since, at),
          country: card.customer_country,
        },
        account: { id: card.account_id, age_days: daysSince(card.account_since, at) },
      },
    });
  }

  /**
   * The partner's rules' verdict, or undefined when neither it nor the platform has rules here (then the
   * authorization is allowed with no read: the rule set is cached).
   */
  verdict(db: Executor, signal: Signal): Promise<Verdict | undefined> {
    return this.engine.decideIfRuled(db, signal);
  }

  /**
   * For the one-statement way: the verdict with no read of a key's velocity, and the guard that checks it
   * in the statement when the rules read one (velocity-guard.ts).
   */
  prejudge(db: Executor, signal: Signal): Promise<Prejudged> {
    return prejudge(this.engine, db, signal);
  }

  /** The signal and the rules that matched, added to the authorization's write. */
  stage(batch: StatementBatch, signal: Signal, transactionId: string, declined: boolean, verdict?: Verdict) {
    stageSignal(batch, signal, transactionId, declined);
    if (verdict) stageDecisions(batch, signal, transactionId, verdict);
  }
}
