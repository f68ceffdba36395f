// The crypto API's decision points (docs/risk.md): every new order (`crypto.order`) and every refund
// proposal (`crypto.refund`) is one signal, decided by its store's and the platform's rules before it is
// written. A block refuses it (403 in the crypto API's errors, no rule named); a review writes it held for
// a person: an order shows no deposit address, a proposal cannot be accepted, until approved. With no rule
// the signal is one more insert in the write.
import type { Executor, Tx } from '../../platform/db/database.ts';
import type { CryptoOrderCustomer } from '../../platform/db/schema.ts';
import { StatementBatch } from '../../platform/db/statement-batch.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import type { Risk } from '../../platform/risk/risk.ts';
import {
  actingRule,
  recordEvaluation,
  type Signal,
  stageDecisions,
  stageSignal,
  type Verdict,
} from '../../platform/risk/risk-engine.ts';
import { type Prejudged, prejudge } from '../../platform/risk/velocity-guard.ts';

export const storeTenant = (storeId: string) => `store:${storeId}`;

type CryptoPoint = 'crypto.order' | 'crypto.refund';

/** The buyer as both points' rules read them, and the signal around them */
export function cryptoSignal(
  point: CryptoPoint,
  facts: {
    storeId: string;
    amount: bigint;
    currency: string;
    customer: CryptoOrderCustomer;
    at: Date;
    /** The point's own attributes (`order`, `refund`, `payment`) */
    attributes: Record<string, unknown>;
  },
): Signal {
  const email = facts.customer.email.trim().toLowerCase();
  return {
    point,
    tenant: storeTenant(facts.storeId),
    at: facts.at,
    amount: facts.amount,
    currency: facts.currency,
    keys: { ip: null, email: email || null, cardFingerprint: null, customerId: null },
    attributes: {
      amount: facts.amount,
      currency: facts.currency,
      email,
      email_domain: email.includes('@') ? email.slice(email.lastIndexOf('@') + 1) : '',
      billing_country: (facts.customer.country ?? '').toUpperCase(),
      store: { id: facts.storeId },
      ...facts.attributes,
    },
  };
}

export class CryptoRisk {
  constructor(
    private readonly risk: Risk,
    private readonly point: CryptoPoint,
  ) {}

  /** The order's or proposal's signal, with what every decision point has (RiskEngine.complete). */
  signal(facts: Parameters<typeof cryptoSignal>[1]): Signal {
    return this.risk.engine.complete(cryptoSignal(this.point, facts));
  }

  /** The rules' verdict, or undefined when neither the store nor the platform has rules here (no read). */
  verdict(db: Executor, signal: Signal): Promise<Verdict | undefined> {
    return this.risk.engine.decideIfRuled(db, signal);
  }

  /**
   * For a write of one statement: the verdict with no read of a key's velocity, and the guard that checks
   * it in the statement when the rules read one (velocity-guard.ts).
   */
  prejudge(db: Executor, signal: Signal): Promise<Prejudged> {
    return prejudge(this.risk.engine, db, signal);
  }

  /** The refusal of a blocked order or proposal (nothing of it is written; see `recordRefusal`). */
  refusal(what: 'order' | 'refund'): DomainError {
    return new DomainError(
      'forbidden',
      what === 'order'
        ? 'this order cannot be accepted; contact the store'
        : 'this refund cannot be proposed; contact the platform',
      { details: { reason: 'risk_blocked' } },
    );
  }

  /** A blocked write's evaluation, recorded by itself. */
  recordRefusal(db: Executor, signal: Signal, objectId: string, verdict: Verdict): Promise<void> {
    return recordEvaluation(db, signal, objectId, true, verdict);
  }

  /** The signal and the rules that matched, added to the write's one statement. */
  stage(batch: StatementBatch, signal: Signal, objectId: string, verdict: Verdict | undefined): void {
    stageSignal(batch, signal, objectId, false);
    if (verdict) stageDecisions(batch, signal, objectId, verdict);
  }

  /** The same, in the write's transaction; a held object's review is opened, ending by `until` at the latest. */
  async record(
    tx: Tx,
    signal: Signal,
    objectId: string,
    verdict: Verdict | undefined,
    until: Date,
  ): Promise<void> {
    const batch = new StatementBatch();
    this.stage(batch, signal, objectId, verdict);
    await batch.run(tx);
    if (verdict?.action !== 'review') return;
    await this.risk.reviews.open(tx, {
      tenant: signal.tenant,
      point: this.point,
      objectId,
      ...actingRule(verdict),
      until,
    });
  }
}
