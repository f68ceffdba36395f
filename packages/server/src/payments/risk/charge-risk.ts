// The payments.charge decision point (docs/risk.md): every charge — a new card, a stored card, a wallet,
// a network token, the hosted checkout, a payment link, a recurring bill, a rebill — is one signal, read
// from the charge as it is about to reach the network, and decided by the merchant's and the platform's
// rules. A block declines the charge before the network is asked; the payer is told it was declined, the
// merchant's decision record says by which rule.
import { type Clock, daysSince } from '../../platform/clock/clock.ts';
import type { Encryptor } from '../../platform/crypto/encryption.ts';
import type { Executor, Tx } from '../../platform/db/database.ts';
import { StatementBatch } from '../../platform/db/statement-batch.ts';
import type { IpCountry } from '../../platform/risk/ip-country.ts';
import type { RiskReviews } from '../../platform/risk/reviews.ts';
import {
  actingRule,
  type RiskEngine,
  type Signal,
  stageDecisions,
  stageSignal,
  type Verdict,
} from '../../platform/risk/risk-engine.ts';
import type { RuleSet } from '../../platform/risk/risk-rules.ts';
import type { RiskList } from '../../platform/risk/rule-expression.ts';
import {
  type SignalKeys,
  type Velocity,
  type VelocityProbe,
  withTenant,
} from '../../platform/risk/velocity.ts';
import type { CardNetwork } from '../../rails/card-network/port.ts';
import type { Buyer, ChargeRequest } from '../transactions/transaction-row.ts';

export interface ChargeRiskDeps {
  engine: RiskEngine;
  reviews: Pick<RiskReviews, 'open'>;
  network: Pick<CardNetwork, 'binInfo'>;
  encryptor: Pick<Encryptor, 'fingerprint'>;
  clock: Clock;
  ipCountry: IpCountry;
}

export const merchantTenant = (merchantId: number) => `merchant:${merchantId}`;

/** A merchant's rules at payments.charge with the lists they read */
export interface RulesInForce {
  ruleSet: RuleSet;
  lists: ReadonlyMap<string, RiskList>;
}

export class ChargeRisk {
  constructor(private readonly deps: ChargeRiskDeps) {}

  /**
   * The merchant's rules at payments.charge and the lists they read (both cached), or undefined when
   * it has none (the platform's count as its own): then a charge is allowed with no read.
   */
  async rulesFor(db: Executor, merchantId: number): Promise<RulesInForce | undefined> {
    const tenant = merchantTenant(merchantId);
    const ruleSet = await this.deps.engine.ruleSet(db, 'payments.charge', tenant);
    if (ruleSet.rules.length === 0) return undefined;
    return { ruleSet, lists: await this.deps.engine.listsFor(db, tenant) };
  }

  /**
   * What velocity is counted by before the charge's customer is read: its email is not known yet, so a
   * rule set that reads email velocity cannot be counted in the one read (undefined).
   */
  probe(r: ChargeRequest, keys: SignalKeys, rules: RulesInForce, at: Date): VelocityProbe | undefined {
    if (rules.ruleSet.velocity.some((f) => f.key === 'email')) return undefined;
    return {
      point: 'payments.charge',
      tenant: merchantTenant(r.order.merchant_id),
      at,
      currency: r.order.currency,
      keys,
    };
  }

  /** Whether a sandbox test value decides this charge (then the general path decides and records it). */
  forced(signal: Signal): boolean {
    return this.deps.engine.testOutcome(signal) !== undefined;
  }

  /** The merchant's windows its rules read (in memory; a read once a minute), beside the one read. */
  tenantVelocity(
    db: Executor,
    probe: VelocityProbe,
    rules: RulesInForce,
  ): Promise<Record<string, bigint> | undefined> {
    return this.deps.engine.tenantVelocity(db, probe, rules.ruleSet.velocity);
  }

  /** The rules evaluated against a signal whose velocity was read with the charge's one read. */
  evaluate(
    rules: RulesInForce,
    signal: Signal,
    velocity: Velocity,
    tenant: Record<string, bigint> | undefined,
  ): Verdict {
    return this.deps.engine.evaluate(rules.ruleSet, rules.lists, signal, withTenant(velocity, tenant));
  }

  async buyer(db: Executor, customerId: number): Promise<Buyer> {
    const row = await db
      .selectFrom('payments_customers')
      .select(['email', 'created_at'])
      .where('id', '=', customerId)
      .executeTakeFirstOrThrow();
    return { email: row.email, createdAt: row.created_at };
  }

  /** What the charge is counted by, its customer's email aside (known once the customer is read). */
  keys(r: ChargeRequest): SignalKeys {
    return {
      ip: r.order.ip,
      email: null,
      cardFingerprint: this.deps.encryptor.fingerprint('payments-card', r.instrument.card.pan),
      customerId: String(r.order.customer_id),
    };
  }

  /** The charge as the rules see it (its keys, when the caller already has them, are not made again). */
  signal(r: ChargeRequest, buyer: Buyer, at = this.deps.clock.now(), known = this.keys(r)): Signal {
    const pan = r.instrument.card.pan;
    const bin = this.deps.network.binInfo(pan.slice(0, 6));
    const email = buyer.email?.trim().toLowerCase() || null;
    const keys = { ...known, email };
    const fingerprint = keys.cardFingerprint;
    const customerId = keys.customerId;
    return this.deps.engine.complete({
      point: 'payments.charge',
      tenant: merchantTenant(r.order.merchant_id),
      at,
      amount: r.amount,
      currency: r.order.currency,
      keys,
      attributes: {
        amount: r.amount,
        currency: r.order.currency,
        ip: r.order.ip ?? '',
        ip_country: this.deps.ipCountry(r.order.ip),
        email: email ?? '',
        email_domain: email?.split('@')[1] ?? '',
        billing_country: r.instrument.holderCountry ?? '',
        source: r.instrument.source,
        order_type: r.order.order_type,
        initiator: r.initiator,
        authenticated: r.instrument.isAuthenticated,
        card: {
          bin: pan.slice(0, 6),
          brand: r.instrument.brand.toLowerCase(),
          funding: bin.type.toLowerCase(),
          country: bin.countryCode,
          fingerprint,
        },
        customer: {
          id: customerId,
          age_days: daysSince(buyer.createdAt, at),
        },
        merchant: {
          id: String(r.order.merchant_id),
          site_id: String(r.order.site_id),
          mcc: r.acceptor.mcc ?? '',
          country: r.acceptor.country ?? '',
        },
      },
    });
  }

  decide(db: Executor, signal: Signal): Promise<Verdict> {
    return this.deps.engine.decide(db, signal);
  }

  /** A charge held for review until a person decides, or its authorization's expiry comes first. */
  openReview(tx: Tx, signal: Signal, t: { id: number; auth_expires_at: Date | null }, verdict: Verdict) {
    return this.deps.reviews.open(tx, {
      tenant: signal.tenant,
      point: 'payments.charge',
      objectId: String(t.id),
      ...actingRule(verdict),
      until: t.auth_expires_at,
    });
  }

  /** The signal and the rules that matched, written in one statement in the transaction's database transaction. */
  async record(tx: Tx, signal: Signal, transactionId: number, declined: boolean, verdict: Verdict) {
    const batch = new StatementBatch();
    this.stage(batch, signal, transactionId, declined, verdict);
    await batch.run(tx);
  }

  /** The signal and the rules that matched (shadow ones: an allowed charge), added to its one statement. */
  stage(batch: StatementBatch, signal: Signal, transactionId: number, declined: boolean, verdict?: Verdict) {
    stageSignal(batch, signal, String(transactionId), declined);
    if (verdict) stageDecisions(batch, signal, String(transactionId), verdict);
  }
}
