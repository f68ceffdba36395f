// The issuing.topup decision point (docs/risk.md): every new topup of an issued card's account is one
// signal, decided by its partner's and the platform's rules in the topup's transaction. A decline refuses
// it (403, reason `risk_declined`, no rule named; the decision is kept); a challenge makes its payment by
// card on the hosted page ask the cardholder for 3-D Secure whatever the card's issuer would choose.
import { daysSince } from '../../platform/clock/clock.ts';
import type { Tx } from '../../platform/db/database.ts';
import { StatementBatch } from '../../platform/db/statement-batch.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import {
  type RiskEngine,
  type Signal,
  stageDecisions,
  stageSignal,
  type Verdict,
} from '../../platform/risk/risk-engine.ts';
import type { CustomerRef } from '../kyc/kyc-service.ts';

export interface TopupFacts {
  customer: CustomerRef;
  accountId: string;
  method: 'bank_transfer' | 'crypto';
  amount: bigint;
  currency: string;
  /** When the cardholder became a customer, and the country of residence their KYC gave ("" when none) */
  customerSince: Date;
  customerCountry: string;
  at: Date;
}

export const topupRefusal = () =>
  new DomainError('forbidden', 'this topup cannot be made; contact your card provider', {
    details: { reason: 'risk_declined' },
  });

export class TopupRisk {
  constructor(private readonly engine: RiskEngine) {}

  signal(t: TopupFacts): Signal {
    return this.engine.complete({
      point: 'issuing.topup',
      tenant: `partner:${t.customer.partnerId}`,
      at: t.at,
      amount: t.amount,
      currency: t.currency,
      keys: { ip: null, email: null, cardFingerprint: null, customerId: t.customer.customerId },
      attributes: {
        amount: t.amount,
        currency: t.currency,
        topup: { method: t.method },
        customer: {
          id: t.customer.customerId,
          age_days: daysSince(t.customerSince, t.at),
          country: t.customerCountry,
        },
        account: { id: t.accountId },
      },
    });
  }

  /** The partner's rules' verdict (a sandbox test value's first), recorded in the topup's transaction. */
  async decide(tx: Tx, signal: Signal, topupId: string): Promise<Verdict | undefined> {
    const verdict = await this.engine.decideIfRuled(tx, signal);
    const batch = new StatementBatch();
    stageSignal(batch, signal, topupId, verdict?.action === 'decline');
    if (verdict) stageDecisions(batch, signal, topupId, verdict);
    await batch.run(tx);
    return verdict;
  }
}
