// KYC of issuing customers (docs/issuing.md, KYC): stores each step's validated data, starts hosted
// document checks with the KYC vendor rail, applies the vendor's results and review decisions, and
// publishes kycStatusChanged on every status change, in the same transaction.
import type { Clock } from '../../platform/clock/clock.ts';
import type { PartyScreening } from '../../platform/compliance/party-screening.ts';
import type { Db, Executor, Tx } from '../../platform/db/database.ts';
import type { KycDocumentKind, KycStatus } from '../../platform/db/schema.ts';
import type { Transact } from '../../platform/db/transact.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import type { Outbox } from '../../platform/events/outbox.ts';
import { newId } from '../../platform/ids.ts';
import type { KycVendor, KycVendorResult } from '../../rails/kyc-vendor/port.ts';
import type { Notifier } from '../../rails/notifier/port.ts';
import { publishIssuingEvent } from '../events/publish-issuing-event.ts';
import { derivedStatus, isDecided, type KycFacts, missingSteps } from './kyc.ts';
import { type KycStep, STEP_NAMES } from './kyc-steps.ts';

/** Minimum age of a cardholder in years (default: 18) */
export const MINIMUM_AGE_YEARS = 18;

export interface CustomerRef {
  customerId: string;
  partnerId: string;
}

export interface KycView {
  customerId: string;
  status: KycStatus;
  rejectReason: string | null;
  completedSteps: string[];
  missingSteps: string[];
  verifications: { identity: KycFacts['identity']; proofOfAddress: KycFacts['proofOfAddress'] };
  updatedAt: Date | null;
}

export interface StartedVerification {
  verificationId: string;
  kind: KycDocumentKind;
  status: 'started';
  url: string;
  expiresAt: Date;
}

export interface KycDeps {
  db: Db;
  transact: Transact;
  clock: Clock;
  outbox: Outbox;
  vendor: KycVendor;
  notifier: Notifier;
  /** The cardholder's name screened against the sanctions lists when given or changed */
  screening: PartyScreening;
}

type KycRow = {
  status: KycStatus;
  reject_reason: string | null;
  steps: Record<string, unknown>;
  updated_at: Date;
};

export class KycService {
  constructor(private readonly deps: KycDeps) {}

  async get(customer: CustomerRef): Promise<KycView> {
    return this.view(this.deps.db, customer.customerId);
  }

  /** Stores one step (already shape-validated by the route); refused once a decision was taken. */
  async saveStep(customer: CustomerRef, step: KycStep, data: Record<string, unknown>): Promise<KycView> {
    if (step === 'personal-info') this.checkAge(String(data.dateOfBirth));
    return this.deps.transact(async (tx) => {
      const kyc = await this.lock(tx, customer.customerId);
      this.assertOpen(kyc);
      if (
        step === 'confirm-pep' &&
        (kyc.steps.pep as { isPoliticallyExposed?: boolean } | undefined)?.isPoliticallyExposed !== true
      ) {
        throw new DomainError(
          'invalid_state',
          'confirm-pep applies only after pep was answered with isPoliticallyExposed: true',
        );
      }
      const steps: Record<string, unknown> = { ...kyc.steps, [step]: data };
      // Answering "not exposed" makes an earlier PEP confirmation moot.
      if (step === 'pep' && data.isPoliticallyExposed !== true) delete steps['confirm-pep'];
      await tx
        .updateTable('issuing_kyc')
        .set({ steps: JSON.stringify(steps), updated_at: this.deps.clock.now() })
        .where('customer_id', '=', customer.customerId)
        .execute();
      if (step === 'personal-info') await this.screen(tx, customer, data);
      await this.settleStatus(tx, customer, kyc.status);
      return this.view(tx, customer.customerId);
    });
  }

  /** The cardholder as their personal information names them, screened (a match holds them) */
  private async screen(tx: Tx, customer: CustomerRef, data: Record<string, unknown>): Promise<void> {
    await this.deps.screening.screen(tx, {
      kind: 'cardholder',
      reference: `cardholder:${customer.customerId}`,
      subject: `customer:${customer.customerId}`,
      tenant: `partner:${customer.partnerId}`,
      name: `${String(data.firstName)} ${String(data.lastName)}`,
      dateOfBirth: String(data.dateOfBirth),
      country: typeof data.nationality === 'string' ? data.nationality : null,
    });
  }

  /** Opens a hosted document check with the KYC vendor and answers its URL. */
  async startVerification(customer: CustomerRef, kind: KycDocumentKind): Promise<StartedVerification> {
    return this.deps.transact(async (tx) => {
      const kyc = await this.lock(tx, customer.customerId);
      this.assertOpen(kyc);
      const prerequisite = kind === 'identity' ? 'personal-info' : 'residence';
      if (kyc.steps[prerequisite] === undefined) {
        throw new DomainError(
          'invalid_state',
          `complete ${prerequisite} before the ${kind.replaceAll('_', ' ')} check`,
        );
      }
      const facts = await this.facts(tx, customer.customerId, kyc.steps);
      if ((kind === 'identity' ? facts.identity : facts.proofOfAddress) === 'verified') {
        throw new DomainError(
          'invalid_state',
          `the ${kind.replaceAll('_', ' ')} document is already verified`,
        );
      }
      const verificationId = newId('kycVerification');
      const session = await this.deps.vendor.startSession(tx, { reference: verificationId, kind });
      await tx
        .insertInto('issuing_kyc_verifications')
        .values({
          id: verificationId,
          customer_id: customer.customerId,
          kind,
          status: 'started',
          vendor_session_id: session.sessionId,
          created_at: this.deps.clock.now(),
        })
        .execute();
      await this.settleStatus(tx, customer, kyc.status);
      return {
        verificationId,
        kind,
        status: 'started' as const,
        url: session.url,
        expiresAt: session.expiresAt,
      };
    });
  }

  /** The KYC vendor's result (the rail's result sink); a result for a closed check changes nothing. */
  async applyVendorResult(db: Executor, result: KycVendorResult): Promise<void> {
    const verification = await db
      .selectFrom('issuing_kyc_verifications as v')
      .innerJoin('issuing_customers as c', 'c.id', 'v.customer_id')
      .select(['v.id', 'v.status', 'v.customer_id', 'c.partner_id'])
      .where('v.vendor_session_id', '=', result.sessionId)
      .forUpdate('v')
      .executeTakeFirst();
    if (verification?.status !== 'started') return;
    const customer = { customerId: verification.customer_id, partnerId: verification.partner_id };
    const kyc = await this.lock(db, customer.customerId);
    await db
      .updateTable('issuing_kyc_verifications')
      .set({
        status: result.outcome,
        reject_reason: result.reason ?? null,
        completed_at: this.deps.clock.now(),
      })
      .where('id', '=', verification.id)
      .execute();
    if (!isDecided(kyc.status)) await this.settleStatus(db, customer, kyc.status);
  }

  /** The review decision (the vendor's, or the sandbox's `POST /sandbox/issuing/kyc/{customerId}/decision`). */
  async decide(
    customerId: string,
    decision: { status: 'approved' | 'rejected'; rejectReason?: string },
  ): Promise<KycView> {
    if (decision.status === 'rejected' && !decision.rejectReason) {
      throw new DomainError('validation_failed', 'a rejection needs a rejectReason', {
        field: 'rejectReason',
      });
    }
    return this.deps.transact(async (tx) => {
      const customer = await tx
        .selectFrom('issuing_customers')
        .select(['id', 'partner_id'])
        .where('id', '=', customerId)
        .executeTakeFirst();
      if (!customer) throw notFound('customer');
      const kyc = await this.lock(tx, customerId);
      if (kyc.status === decision.status)
        throw new DomainError('invalid_state', `KYC is already ${kyc.status}`, {
          details: { status: kyc.status },
        });
      const rejectReason = decision.status === 'rejected' ? (decision.rejectReason ?? null) : null;
      await this.setStatus(tx, { customerId, partnerId: customer.partner_id }, decision.status, rejectReason);
      return this.view(tx, customerId);
    });
  }

  /** Whether a customer may be issued a card (the cards capability asks this). */
  async isApproved(db: Executor, customerId: string): Promise<boolean> {
    const row = await db
      .selectFrom('issuing_kyc')
      .select('status')
      .where('customer_id', '=', customerId)
      .executeTakeFirst();
    return row?.status === 'approved';
  }

  // Internals ------------------------------------------------------------------------------------------

  /** Recomputes the undecided status from the facts and publishes the change, if any. */
  private async settleStatus(tx: Executor, customer: CustomerRef, current: KycStatus): Promise<void> {
    if (isDecided(current)) return;
    const kyc = await this.lock(tx, customer.customerId);
    const next = derivedStatus(await this.facts(tx, customer.customerId, kyc.steps));
    if (next !== current) await this.setStatus(tx, customer, next, null);
  }

  private async setStatus(
    tx: Executor,
    customer: CustomerRef,
    status: KycStatus,
    rejectReason: string | null,
  ): Promise<void> {
    await tx
      .updateTable('issuing_kyc')
      .set({ status, reject_reason: rejectReason, updated_at: this.deps.clock.now() })
      .where('customer_id', '=', customer.customerId)
      .execute();
    await publishIssuingEvent(this.deps.outbox, tx, {
      partnerId: customer.partnerId,
      customerId: customer.customerId,
      eventType: 'kycStatusChanged',
      data: { customerId: customer.customerId, status, ...(rejectReason ? { rejectReason } : {}) },
    });
    if (isDecided(status)) await this.tellOutcome(tx, customer.customerId, status === 'approved');
  }

  /**
   * Tells the customer the outcome by email, in the step's transaction, when they have an address (a
   * wallet-registered customer may not). The reason of a rejection is the partner's to explain.
   */
  private async tellOutcome(tx: Executor, customerId: string, approved: boolean): Promise<void> {
    const row = await tx
      .selectFrom('issuing_customers as c')
      .innerJoin('partners as p', 'p.id', 'c.partner_id')
      .select(['c.email', 'p.name'])
      .where('c.id', '=', customerId)
      .executeTakeFirst();
    if (!row?.email) return;
    await this.deps.notifier.send(tx, {
      channel: 'email',
      recipient: row.email,
      subject: approved
        ? `Your identity is verified at ${row.name}`
        : `We could not verify your identity at ${row.name}`,
      body: approved
        ? `Your identity has been verified. You can now be issued cards by ${row.name}.`
        : `Your identity could not be verified, so ${row.name} cannot issue you cards for now. ${row.name} will tell you what you can do next.`,
    });
  }

  /** Creates the KYC row on first use and locks it: one writer per customer at a time. */
  private async lock(tx: Executor, customerId: string): Promise<KycRow> {
    await tx
      .insertInto('issuing_kyc')
      .values({ customer_id: customerId, status: 'not_started', updated_at: this.deps.clock.now() })
      .onConflict((oc) => oc.column('customer_id').doNothing())
      .execute();
    return tx
      .selectFrom('issuing_kyc')
      .select(['status', 'reject_reason', 'steps', 'updated_at'])
      .where('customer_id', '=', customerId)
      .forUpdate()
      .executeTakeFirstOrThrow();
  }

  private assertOpen(kyc: KycRow): void {
    if (isDecided(kyc.status)) {
      throw new DomainError('invalid_state', `KYC is ${kyc.status}: it can no longer change`, {
        details: { status: kyc.status },
      });
    }
  }

  private async facts(db: Executor, customerId: string, steps: Record<string, unknown>): Promise<KycFacts> {
    const latest = await db
      .selectFrom('issuing_kyc_verifications')
      .select(['kind', 'status'])
      .where('customer_id', '=', customerId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    const statusOf = (kind: KycDocumentKind) => {
      // A verified document stays verified; otherwise the latest attempt tells.
      if (latest.some((v) => v.kind === kind && v.status === 'verified')) return 'verified' as const;
      return latest.find((v) => v.kind === kind)?.status ?? ('not_started' as const);
    };
    return {
      steps: steps as KycFacts['steps'],
      identity: statusOf('identity'),
      proofOfAddress: statusOf('proof_of_address'),
    };
  }

  private async view(db: Executor, customerId: string): Promise<KycView> {
    const row = await db
      .selectFrom('issuing_kyc')
      .selectAll()
      .where('customer_id', '=', customerId)
      .executeTakeFirst();
    const steps = row?.steps ?? {};
    const facts = await this.facts(db, customerId, steps);
    return {
      customerId,
      status: row?.status ?? 'not_started',
      rejectReason: row?.reject_reason ?? null,
      completedSteps: STEP_NAMES.filter((s) => steps[s] !== undefined),
      missingSteps: row && isDecided(row.status) ? [] : missingSteps(facts),
      verifications: { identity: facts.identity, proofOfAddress: facts.proofOfAddress },
      updatedAt: row?.updated_at ?? null,
    };
  }

  private checkAge(dateOfBirth: string): void {
    const born = new Date(`${dateOfBirth}T00:00:00Z`);
    const now = this.deps.clock.now();
    const adultFrom = new Date(
      Date.UTC(born.getUTCFullYear() + MINIMUM_AGE_YEARS, born.getUTCMonth(), born.getUTCDate()),
    );
    if (adultFrom > now) {
      throw new DomainError('validation_failed', `the cardholder must be at least ${MINIMUM_AGE_YEARS}`, {
        field: 'dateOfBirth',
      });
    }
    if (born.getUTCFullYear() < now.getUTCFullYear() - 120) {
      throw new DomainError('validation_failed', 'dateOfBirth is implausibly old', { field: 'dateOfBirth' });
    }
  }
}
