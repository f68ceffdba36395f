// Deciding at a decision point (docs/risk.md, How a decision is made): the tenant's rule set (cached,
// compiled), the velocity features its rules read (one statement, only when some rule reads one), every
// rule evaluated in order; the first active rule that matches decides, shadow rules are only recorded.
// The evaluation's signal row is written whether or not any rule exists, so velocity and backtests have
// history before the first rule; the caller adds it to its own write.
import type { Insertable } from 'kysely';
import type { Logger } from 'pino';
import type { Executor } from '../db/database.ts';
import type { RiskDecisionsTable, RiskSignalsTable } from '../db/schema.ts';
import { rowInsert, StatementBatch } from '../db/statement-batch.ts';
import type { DecisionPointName, RuleAction, VelocityFeature } from './decision-points.ts';
import type { RiskLists } from './risk-lists.ts';
import type { RiskRules, RiskScope, RuleSet } from './risk-rules.ts';
import type { RiskList } from './rule-expression.ts';
import { isSafeInteger, recordedAttributes } from './signal-json.ts';
import type { TenantWindows } from './tenant-windows.ts';
import { readVelocity, type SignalKeys, type Velocity, type VelocityProbe, withTenant } from './velocity.ts';

/** One evaluation's facts: who, what, how much, and every attribute the rules may read. */
export interface Signal {
  point: DecisionPointName;
  tenant: RiskScope;
  at: Date;
  amount: bigint;
  currency: string;
  keys: SignalKeys;
  /** The decision point's attributes, velocity aside (ints as bigint, as CEL has them) */
  attributes: Record<string, unknown>;
}

export interface MatchedRule {
  ruleId: string;
  ruleName: string;
  action: RuleAction;
  mode: 'active' | 'shadow';
  acted: boolean;
}

export interface Verdict {
  /** What happens: the deciding rule's action, else allow */
  action: RuleAction;
  matched: MatchedRule[];
  /** The attributes evaluated, velocity included (what the decision records show) */
  attributes: Record<string, unknown>;
}

const ALLOWED: Verdict = { action: 'allow', matched: [], attributes: {} };

/**
 * The sandbox's test values (docs/risk.md, Sandbox), per decision point: a payer with one of these emails
 * or IPs, a card authorization from one of these merchant ids, a bank account held by one of these names,
 * a topup of one of these amounts, is refused, held or challenged whatever the rules say, so an integration can see each outcome without
 * writing a rule. Never in production.
 */
export const SANDBOX_OUTCOMES: Partial<Record<DecisionPointName, Record<string, RuleAction>>> = {
  'payments.charge': {
    'risk-block@example.com': 'block',
    'risk-review@example.com': 'review',
    'risk-challenge@example.com': 'challenge',
    '192.0.2.66': 'block',
    '192.0.2.77': 'review',
    '192.0.2.88': 'challenge',
  },
  // issuing.merchant_id
  'issuing.authorization': { 'risk-decline': 'decline', 'risk-challenge': 'challenge' },
  // the amount in minor units: a topup of 666.00 is declined, of 777.00 challenged (a topup has no email)
  'issuing.topup': { '66600': 'decline', '77700': 'challenge' },
  'crypto.order': {
    'risk-block@example.com': 'block',
    'risk-review@example.com': 'review',
  },
  'crypto.refund': {
    'risk-block@example.com': 'block',
    'risk-review@example.com': 'review',
  },
  // bank_account.holder_name
  payout: { 'Risk Payout Hold': 'hold', 'Risk Payout Block': 'block' },
  'bank_account.change': { 'Risk Change Hold': 'hold', 'Risk Change Block': 'block' },
};

/** The values of a signal the sandbox's test values are looked up by */
function testValues(signal: Signal): (string | null)[] {
  const issuing = signal.attributes.issuing as { merchant_id?: string } | undefined;
  const account = signal.attributes.bank_account as { holder_name?: string } | undefined;
  return [
    signal.keys.email,
    signal.keys.ip,
    issuing?.merchant_id ?? null,
    account?.holder_name ?? null,
    signal.point === 'issuing.topup' ? signal.amount.toString() : null,
  ];
}

export class RiskEngine {
  /** Minor units of a currency in the reporting currency's (ReportingAmounts, set once the FX rail exists) */
  private reporting: (amount: bigint, currency: string) => bigint = () => 0n;

  constructor(
    private readonly deps: {
      rules: RiskRules;
      lists: RiskLists;
      logger: Pick<Logger, 'warn'>;
      tenantWindows: TenantWindows;
      /** Whether the sandbox's test values act (sandbox mode only) */
      sandboxOutcomes: boolean;
    },
  ) {}

  useReportingAmounts(convert: (amount: bigint, currency: string) => bigint): void {
    this.reporting = convert;
  }

  /**
   * The signal with what every decision point has beside its own attributes: `amount_reporting`, its
   * amount in the platform's reporting currency. Each decision point's signal is made through this.
   */
  complete(signal: Signal): Signal {
    return {
      ...signal,
      attributes: { ...signal.attributes, amount_reporting: this.reporting(signal.amount, signal.currency) },
    };
  }

  /** The outcome a sandbox test value forces, if the signal carries one. */
  testOutcome(signal: Signal): Verdict | undefined {
    if (!this.deps.sandboxOutcomes) return undefined;
    const outcomes = SANDBOX_OUTCOMES[signal.point] ?? {};
    const value = testValues(signal).find((v) => v !== null && outcomes[v] !== undefined);
    const action = value ? outcomes[value] : undefined;
    if (!action) return undefined;
    return {
      action,
      matched: [
        { ruleId: 'sandbox', ruleName: `sandbox test value ${value}`, action, mode: 'active', acted: true },
      ],
      attributes: signal.attributes,
    };
  }

  /**
   * The verdict, or undefined when neither the tenant nor the platform has rules at the point and no
   * sandbox test value acts: then nothing is read (the rule set is cached) and the write goes on as if
   * allowed. For the write paths that keep one statement when no rule exists.
   */
  async decideIfRuled(db: Executor, signal: Signal): Promise<Verdict | undefined> {
    const forced = this.testOutcome(signal);
    if (forced) return forced;
    const ruleSet = await this.ruleSet(db, signal.point, signal.tenant);
    if (ruleSet.rules.length === 0) return undefined;
    return this.decide(db, signal);
  }

  /** The rule set that applies to a tenant at a point (cached): empty when none was written. */
  ruleSet(db: Executor, point: DecisionPointName, tenant: RiskScope): Promise<RuleSet> {
    return this.deps.rules.ruleSet(db, point, tenant);
  }

  /** The lists a tenant's rules read (cached). */
  listsFor(db: Executor, tenant: RiskScope): Promise<ReadonlyMap<string, RiskList>> {
    return this.deps.lists.listsFor(db, tenant);
  }

  /** Evaluates the signal against its tenant's rules, reading the velocity they need. */
  async decide(db: Executor, signal: Signal): Promise<Verdict> {
    const forced = this.testOutcome(signal);
    if (forced) return forced;
    const ruleSet = await this.ruleSet(db, signal.point, signal.tenant);
    if (ruleSet.rules.length === 0) return { ...ALLOWED, attributes: signal.attributes };
    const [lists, velocity, tenant] = await Promise.all([
      this.listsFor(db, signal.tenant),
      readVelocity(db, signal, ruleSet.velocity),
      this.tenantVelocity(db, signal, ruleSet.velocity),
    ]);
    return this.evaluate(ruleSet, lists, signal, withTenant(velocity, tenant));
  }

  /** The tenant's windows a rule set reads, from memory (a read once a minute); undefined when none is read. */
  tenantVelocity(db: Executor, probe: VelocityProbe, features: readonly VelocityFeature[]) {
    return this.deps.tenantWindows.read(db, probe, features);
  }

  /**
   * Every rule in order, with no I/O: the first active rule that matches decides, every match is kept.
   * A rule that fails at run time (a division by zero) does not match; it is logged.
   */
  evaluate(
    ruleSet: RuleSet,
    lists: ReadonlyMap<string, RiskList>,
    signal: Signal,
    velocity: Velocity,
  ): Verdict {
    const attributes = { ...signal.attributes, velocity };
    let action: RuleAction = 'allow';
    let decided = false;
    const matched: MatchedRule[] = [];
    for (const rule of ruleSet.rules) {
      let hit = false;
      try {
        hit = rule.expression.evaluate(attributes, lists);
      } catch (err) {
        this.deps.logger.warn(
          { ruleId: rule.id, err: (err as Error).message },
          'a risk rule failed to evaluate',
        );
      }
      if (!hit) continue;
      const acts = rule.mode === 'active' && !decided;
      if (acts) {
        decided = true;
        action = rule.action;
      }
      matched.push({
        ruleId: rule.id,
        ruleName: rule.name,
        action: rule.action,
        mode: rule.mode,
        acted: acts,
      });
    }
    return { action, matched, attributes };
  }
}

type SignalRow = Required<Omit<Insertable<RiskSignalsTable>, 'id'>>;

/** The signal's row, to be written with the object it is about. */
function signalRow(signal: Signal, objectId: string, declined: boolean): SignalRow {
  return {
    decision_point: signal.point,
    tenant: signal.tenant,
    object_id: objectId,
    at: signal.at,
    amount: signal.amount.toString(),
    currency: signal.currency,
    ip: signal.keys.ip,
    email: signal.keys.email,
    card_fingerprint: signal.keys.cardFingerprint,
    customer_id: signal.keys.customerId,
    declined,
    attributes: attributesJson(recordedAttributes(signal.attributes, signal)),
  };
}

const insertSignal = rowInsert<SignalRow, keyof SignalRow>('risk_signals', [
  'decision_point',
  'tenant',
  'object_id',
  'at',
  'amount',
  'currency',
  'ip',
  'email',
  'card_fingerprint',
  'customer_id',
  'declined',
  'attributes',
]);

/** The signal's row, added to a write's one statement. */
export function stageSignal(
  batch: StatementBatch,
  signal: Signal,
  objectId: string,
  declined: boolean,
): void {
  batch.add(insertSignal(signalRow(signal, objectId, declined)));
}

type DecisionRow = Required<Omit<Insertable<RiskDecisionsTable>, 'id'>>;

/** The verdict's matched rules, to be written with the object they are about. */
function decisionRows(signal: Signal, objectId: string, verdict: Verdict): DecisionRow[] {
  const attributes = attributesJson(verdict.attributes);
  return verdict.matched.map((m) => ({
    tenant: signal.tenant,
    decision_point: signal.point,
    object_id: objectId,
    rule_id: m.ruleId,
    rule_name: m.ruleName,
    action: m.action,
    mode: m.mode,
    acted: m.acted,
    attributes,
    at: signal.at,
  }));
}

const insertDecision = rowInsert<DecisionRow, keyof DecisionRow>('risk_decisions', [
  'tenant',
  'decision_point',
  'object_id',
  'rule_id',
  'rule_name',
  'action',
  'mode',
  'acted',
  'attributes',
  'at',
]);

/** The verdict's matched rules, added to a write's one statement. */
export function stageDecisions(
  batch: StatementBatch,
  signal: Signal,
  objectId: string,
  verdict: Verdict,
): void {
  for (const row of decisionRows(signal, objectId, verdict)) batch.add(insertDecision(row));
}

/**
 * The signal and the rules that matched, written by a statement of their own in the caller's transaction:
 * for the writes that are not one statement (money out).
 */
export async function recordEvaluation(
  db: Executor,
  signal: Signal,
  objectId: string,
  refused: boolean,
  verdict: Verdict,
): Promise<void> {
  const batch = new StatementBatch();
  stageSignal(batch, signal, objectId, refused);
  stageDecisions(batch, signal, objectId, verdict);
  await batch.run(db);
}

/** The rule that decided a held or reviewed object, for its review (a sandbox test value is one too). */
export function actingRule(verdict: Verdict): { ruleId: string; ruleName: string } {
  const rule = verdict.matched.find((m) => m.acted);
  if (!rule) throw new Error(`a ${verdict.action} verdict without the rule that acted`);
  return { ruleId: rule.ruleId, ruleName: rule.ruleName };
}

/** JSON of attributes: exact integers as JSON numbers when safe, else as text. */
export function attributesJson(attributes: Record<string, unknown>): string {
  return JSON.stringify(attributes, (_key, value) =>
    typeof value === 'bigint' ? (isSafeInteger(value) ? Number(value) : value.toString()) : value,
  );
}
