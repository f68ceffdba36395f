// Screening everyone on the other side (docs/compliance.md, Who is screened): a party — a cardholder from
// their KYC, a payout bank account's holder — is recorded and screened in the transaction that gives or
// changes its name, so a match opens its case (and holds its subject) before anything else can happen with
// the new name. After a list import every party is screened again in the background (rescreenStep), in
// bounded batches, each committed with the cursor it reached: a crash resumes from the last batch, and
// an alert raised twice is one alert (compliance-cases.ts).
import { createHash } from 'node:crypto';
import type { Clock } from '../clock/clock.ts';
import type { Db, Tx } from '../db/database.ts';
import type { AlertedParty, ComplianceCases } from './compliance-cases.ts';
import type { SanctionsLists } from './sanctions-lists.ts';

export interface Party {
  kind: 'cardholder' | 'bank_account_holder' | 'legal_entity' | 'owner' | 'director';
  /** What the party is, once (`cardholder:<customer id>`): a new name for it replaces the old */
  reference: string;
  /** Whose money a match holds: `customer:<id>`, `site:<id>`, `store:<id>` */
  subject: string;
  /** `partner:<id>`, `merchant:<id>`, `store:<id>` */
  tenant: string;
  name: string;
  dateOfBirth?: string | null;
  country?: string | null;
}

/** Parties screened in one re-screen transaction */
const RESCREEN_BATCH = 500;
/** A sweep round's time for re-screening: the other sweeps wait behind it */
const RESCREEN_ROUND_MS = 500;

export class PartyScreening {
  constructor(
    private readonly deps: {
      db: Db;
      clock: Clock;
      sanctions: SanctionsLists;
      cases: ComplianceCases;
      /** TESSERA_AML_HIGH_RISK_COUNTRIES (aml-scenarios.ts) */
      highRiskCountries: ReadonlySet<string>;
    },
  ) {}

  /**
   * Records the party (a changed name, date of birth or country replaces what it had) and screens it when
   * it is new or changed. Answers the alerts raised.
   */
  async screen(tx: Tx, party: Party): Promise<number> {
    const now = this.deps.clock.now();
    const dateOfBirth = party.dateOfBirth ?? null;
    const country = party.country?.toUpperCase() ?? null;
    const contentSha256 = createHash('sha256')
      .update(JSON.stringify([party.name, dateOfBirth, country]))
      .digest('hex');
    const row = await tx
      .insertInto('compliance_parties')
      .values({
        kind: party.kind,
        reference: party.reference,
        subject: party.subject,
        tenant: party.tenant,
        name: party.name,
        date_of_birth: dateOfBirth,
        country,
        content_sha256: contentSha256,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) =>
        oc
          .column('reference')
          .doUpdateSet({
            name: party.name,
            date_of_birth: dateOfBirth,
            country,
            content_sha256: contentSha256,
            updated_at: now,
            retired_at: null,
          })
          .where((eb) =>
            eb.or([
              eb('compliance_parties.content_sha256', '!=', contentSha256),
              eb('compliance_parties.retired_at', 'is not', null),
            ]),
          ),
      )
      .returning('id')
      .executeTakeFirst();
    // Unchanged: screened when it was written, and again at every import since
    if (!row) return 0;
    if (country && this.deps.highRiskCountries.has(country)) {
      // A scenario, not a match: an alert for a person to look at, holding nothing until confirmed
      await this.deps.cases.raiseScenario(tx, {
        subject: party.subject,
        tenant: party.tenant,
        scenario: 'high_risk_country',
        key: `high_risk_country:${row.id}:${contentSha256}`,
        evidence: {
          summary: `${party.kind.replace(/_/g, ' ')} ${party.name}: ${country} is a high-risk country`,
          party: { kind: party.kind, name: party.name, country },
          parameters: { highRiskCountries: [...this.deps.highRiskCountries] },
        },
      });
    }
    return this.screenOne(tx, {
      id: row.id,
      kind: party.kind,
      subject: party.subject,
      tenant: party.tenant,
      contentSha256,
      name: party.name,
      dateOfBirth,
      country,
    });
  }

  /**
   * The parties whose references start so and are not kept are no longer screened (an owner removed from
   * a profile); their alerts stay with their cases
   */
  async retire(tx: Tx, prefix: string, keep: readonly string[]): Promise<void> {
    let query = tx
      .updateTable('compliance_parties')
      .set({ retired_at: this.deps.clock.now() })
      .where('reference', 'like', `${prefix.replace(/[\\%_]/g, '\\$&')}%`)
      .where('retired_at', 'is', null);
    if (keep.length > 0) query = query.where('reference', 'not in', keep);
    await query.execute();
  }

  private async screenOne(tx: Tx, party: AlertedParty, atLeastImport?: string): Promise<number> {
    const index = await this.deps.sanctions.index(tx, atLeastImport);
    const matches = index.screen(
      { name: party.name, dateOfBirth: party.dateOfBirth ?? undefined, country: party.country ?? undefined },
      this.deps.sanctions.threshold,
    );
    return this.deps.cases.raise(tx, party, matches);
  }

  /**
   * The sweep: the newest unfinished re-screen goes on from its cursor, a batch a transaction, for about
   * RESCREEN_ROUND_MS (older unfinished ones are finished by it: every party is screened against every
   * current entry). Answers the parties screened.
   */
  async rescreenStep(): Promise<number> {
    const started = Date.now();
    let screened = 0;
    for (;;) {
      const step = await this.deps.db.transaction().execute(async (tx) => {
        const run = await tx
          .selectFrom('compliance_rescreens')
          .select(['import_id', 'cursor'])
          .where('finished_at', 'is', null)
          .orderBy('import_id', 'desc')
          .limit(1)
          .forUpdate()
          .skipLocked()
          .executeTakeFirst();
        if (!run) return undefined;
        const now = this.deps.clock.now();
        await tx
          .updateTable('compliance_rescreens')
          .set({ finished_at: now })
          .where('finished_at', 'is', null)
          .where('import_id', '<', run.import_id)
          .execute();
        const parties = await tx
          .selectFrom('compliance_parties')
          .select(['id', 'kind', 'subject', 'tenant', 'content_sha256', 'name', 'date_of_birth', 'country'])
          .where('id', '>', run.cursor)
          .where('retired_at', 'is', null)
          .orderBy('id')
          .limit(RESCREEN_BATCH)
          .execute();
        let alerts = 0;
        for (const p of parties) {
          alerts += await this.screenOne(
            tx,
            {
              id: p.id,
              kind: p.kind,
              subject: p.subject,
              tenant: p.tenant,
              contentSha256: p.content_sha256,
              name: p.name,
              dateOfBirth: p.date_of_birth,
              country: p.country,
            },
            run.import_id,
          );
        }
        const last = parties.at(-1)?.id ?? run.cursor;
        await tx
          .updateTable('compliance_rescreens')
          .set((eb) => ({
            cursor: last,
            screened: eb('screened', '+', String(parties.length)),
            alerts: eb('alerts', '+', alerts),
            finished_at: parties.length < RESCREEN_BATCH ? now : null,
          }))
          .where('import_id', '=', run.import_id)
          .execute();
        return { screened: parties.length, done: parties.length < RESCREEN_BATCH };
      });
      if (!step) return screened;
      screened += step.screened;
      if (step.done || Date.now() - started >= RESCREEN_ROUND_MS) return screened;
    }
  }
}
