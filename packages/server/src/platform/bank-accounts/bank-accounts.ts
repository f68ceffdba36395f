// The bank account payouts go to (docs/payouts.md, Bank accounts): one per payments site and one per
// crypto store. The IBAN and BIC are checked at the edge with ibantools (the fields below); the IBAN is
// stored encrypted, bound to its owner (a bank file must carry it), and shown masked. Each API presents
// the account in its own envelope and wire names; this module is what they share. Every setting or change
// is a decision point of the risk rules (`bank_account.change`, docs/risk.md): a rule may block it, or
// hold it for a person (bank_account_changes) while payouts keep going to the account in place.
import { electronicFormatIBAN, isValidBIC, isValidIBAN } from 'ibantools';
import { z } from 'zod';
import { noteChange } from '../audit/audit-changes.ts';
import type { Clock } from '../clock/clock.ts';
import { daysSince } from '../clock/clock.ts';
import type { PartyScreening } from '../compliance/party-screening.ts';
import type { Encryptor } from '../crypto/encryption.ts';
import type { Db, Executor, Tx } from '../db/database.ts';
import { runTransaction } from '../db/transact.ts';
import { DomainError, notFound } from '../errors/domain-error.ts';
import { newId } from '../ids.ts';
import { decideMoneyOut, moneyOutTenant } from '../payouts/money-out-risk.ts';
import { type Owner, ownerKey, parseOwnerKey } from '../payouts/terms.ts';
import type { Risk } from '../risk/risk.ts';
import { actingRule } from '../risk/risk-engine.ts';

export type BankAccountOwner = Owner;

/** An IBAN as people write it (spaces, lower case), checked (country format and check digits). */
export const ibanField = z
  .string()
  .max(50)
  .transform((value) => electronicFormatIBAN(value) ?? '')
  .refine((iban) => isValidIBAN(iban), 'must be a valid IBAN (country, length and check digits)');

/** A BIC (8 or 11 characters); optional for SEPA transfers, which route by IBAN. */
export const bicField = z
  .string()
  .trim()
  .transform((value) => value.toUpperCase())
  .refine((bic) => isValidBIC(bic), 'must be a valid BIC (8 or 11 characters)');

/** The account holder's name as a SEPA credit transfer carries it (at most 70 characters). */
export const holderNameField = z.string().trim().min(1).max(70);

export interface BankAccountInput {
  /** Electronic format, valid */
  iban: string;
  bic: string | undefined;
  holderName: string;
}

export interface BankAccount {
  /** Masked: the country, the check digits and the last four characters */
  iban: string;
  country: string;
  bic: string | null;
  holderName: string;
  updatedAt: Date;
  /** `active`: payouts go to it; `held`: a change a risk rule holds for a person (not yet in use) */
  status: 'active' | 'held';
}

export function maskIban(iban: string): string {
  return `${iban.slice(0, 4)}${'*'.repeat(Math.max(0, iban.length - 8))}${iban.slice(-4)}`;
}

export class BankAccounts {
  constructor(
    private readonly encryptor: Encryptor,
    private readonly clock: Clock,
    private readonly risk: Risk,
    private readonly screening: PartyScreening,
  ) {
    // A held change applied when a person approves it, dropped when refused or expired.
    risk.reviews.outcomes.set('bank_account.change', (tx, changeId, approved) =>
      this.decideHeld(tx, changeId, approved),
    );
    // Approving it is changing the account: the tenant's policy on bank account changes applies.
    risk.reviews.approvals.set('bank_account.change', async (db, changeId) => {
      const change = await db
        .selectFrom('bank_account_changes')
        .select(['owner', 'iban_masked'])
        .where('id', '=', changeId)
        .executeTakeFirstOrThrow();
      return {
        action: 'bankAccountChange',
        summary: `apply the held change of ${change.owner}'s payout bank account to ${change.iban_masked}`,
      };
    });
  }

  async get(db: Executor, owner: BankAccountOwner): Promise<BankAccount> {
    const row = await db
      .selectFrom('bank_accounts')
      .select(['iban_masked', 'country', 'bic', 'holder_name', 'updated_at'])
      .where('owner', '=', ownerKey(owner))
      .executeTakeFirst();
    if (!row) throw notFound('bank account');
    return toBankAccount(row, 'active');
  }

  /**
   * Sets (or replaces) the owner's account, as the risk rules decide: set (`active`), held for a person
   * (`held`, in use once approved; a newer change replaces a held one) or refused (403, reason
   * `risk_blocked`, the decision recorded). The caller has checked the owner is the tenant's.
   */
  async put(db: Executor, owner: BankAccountOwner, input: BankAccountInput): Promise<BankAccount> {
    const decided = db.isTransaction
      ? await this.decideAndPut(db as Tx, owner, input)
      : await runTransaction(db as Db, (tx) => this.decideAndPut(tx, owner, input));
    if (decided === 'blocked') {
      throw new DomainError('forbidden', 'this bank account cannot be set; contact the platform', {
        details: { reason: 'risk_blocked' },
      });
    }
    return decided;
  }

  private async decideAndPut(
    tx: Tx,
    owner: BankAccountOwner,
    input: BankAccountInput,
  ): Promise<BankAccount | 'blocked'> {
    const key = ownerKey(owner);
    const now = this.clock.now();
    const values = {
      iban_enc: this.encryptor.encrypt(input.iban, `bank-account:${key}`),
      iban_masked: maskIban(input.iban),
      country: input.iban.slice(0, 2),
      bic: input.bic ?? null,
      holder_name: input.holderName,
    };
    const before = await tx
      .selectFrom('bank_accounts')
      .select(['iban_masked', 'bic', 'holder_name', 'country', 'updated_at'])
      .where('owner', '=', key)
      .executeTakeFirst();
    const changeId = newId('bankAccountChange', now.getTime());
    const tenant = await moneyOutTenant(tx, owner, now);
    const verdict = await decideMoneyOut(this.risk, tx, {
      point: 'bank_account.change',
      tenant,
      objectId: changeId,
      at: now,
      amount: 0n,
      currency: '',
      attributes: {
        iban: input.iban,
        country: values.country,
        bank_account: {
          holder_name: input.holderName,
          first: before === undefined,
          previous_country: before?.country ?? '',
          previous_age_days: before ? daysSince(before.updated_at, now) : 0n,
        },
      },
    });
    if (verdict.action === 'block') return 'blocked';
    if (verdict.action === 'hold') {
      await tx
        .updateTable('bank_account_changes')
        .set({ status: 'refused', decided_at: now })
        .where('owner', '=', key)
        .where('status', '=', 'held')
        .execute();
      const held = await tx
        .insertInto('bank_account_changes')
        .values({ id: changeId, owner: key, ...values, status: 'held', created_at: now })
        .returning(['iban_masked', 'country', 'bic', 'holder_name', 'created_at as updated_at'])
        .executeTakeFirstOrThrow();
      await this.risk.reviews.open(tx, {
        tenant: tenant.scope,
        point: 'bank_account.change',
        objectId: changeId,
        ...actingRule(verdict),
      });
      return toBankAccount(held, 'held');
    }
    return this.write(tx, key, { ...values, updated_at: now }, before);
  }

  /** A held change approved (applied) or refused; one a newer change replaced stays as it is. */
  private async decideHeld(tx: Tx, changeId: string, approved: boolean): Promise<void> {
    const now = this.clock.now();
    const change = await tx
      .updateTable('bank_account_changes')
      .set({ status: approved ? 'applied' : 'refused', decided_at: now })
      .where('id', '=', changeId)
      .where('status', '=', 'held')
      .returningAll()
      .executeTakeFirst();
    if (!change || !approved) return;
    const before = await tx
      .selectFrom('bank_accounts')
      .select(['iban_masked', 'bic', 'holder_name'])
      .where('owner', '=', change.owner)
      .executeTakeFirst();
    const { iban_enc, iban_masked, country, bic, holder_name } = change;
    await this.write(
      tx,
      change.owner,
      { iban_enc, iban_masked, country, bic, holder_name, updated_at: now },
      before,
    );
  }

  private async write(
    db: Tx,
    key: string,
    values: {
      iban_enc: string;
      iban_masked: string;
      country: string;
      bic: string | null;
      holder_name: string;
      updated_at: Date;
    },
    before: { iban_masked: string; bic: string | null; holder_name: string } | undefined,
  ): Promise<BankAccount> {
    const now = values.updated_at;
    const row = await db
      .insertInto('bank_accounts')
      .values({ owner: key, ...values, created_at: now })
      .onConflict((oc) => oc.column('owner').doUpdateSet(values))
      .returning(['iban_masked', 'country', 'bic', 'holder_name', 'updated_at'])
      .executeTakeFirstOrThrow();
    // The holder screened against the sanctions lists before a payout can go to them
    await this.screening.screen(db, {
      kind: 'bank_account_holder',
      reference: `bank_account_holder:${key}`,
      subject: key,
      tenant: (await moneyOutTenant(db, parseOwnerKey(key), now)).scope,
      name: row.holder_name,
    });
    // Masked both: the audit trail never holds an IBAN.
    noteChange(
      `bank account of ${key}`,
      before ? { iban_masked: before.iban_masked, bic: before.bic, holder_name: before.holder_name } : null,
      { iban_masked: row.iban_masked, bic: row.bic, holder_name: row.holder_name },
    );
    return toBankAccount(row, 'active');
  }
}

function toBankAccount(
  row: { iban_masked: string; country: string; bic: string | null; holder_name: string; updated_at: Date },
  status: BankAccount['status'],
): BankAccount {
  return {
    iban: row.iban_masked,
    country: row.country,
    bic: row.bic,
    holderName: row.holder_name,
    updatedAt: row.updated_at,
    status,
  };
}
