// The bank account payouts go to (docs/payouts.md, Bank accounts): one per payments site and one per
// crypto store. The IBAN and BIC are checked at the edge with ibantools (the fields below); the IBAN is
// stored encrypted, bound to its owner (a bank file must carry it), and shown masked. Each API presents
// the account in its own envelope and wire names; this module is what they share.
import { electronicFormatIBAN, isValidBIC, isValidIBAN } from 'ibantools';
import { z } from 'zod';
import { noteChange } from '../audit/audit-changes.ts';
import type { Clock } from '../clock/clock.ts';
import type { Encryptor } from '../crypto/encryption.ts';
import type { Executor } from '../db/database.ts';
import { notFound } from '../errors/domain-error.ts';
import { type Owner, ownerKey } from '../payouts/terms.ts';

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
}

export function maskIban(iban: string): string {
  return `${iban.slice(0, 4)}${'*'.repeat(Math.max(0, iban.length - 8))}${iban.slice(-4)}`;
}

export class BankAccounts {
  constructor(
    private readonly encryptor: Encryptor,
    private readonly clock: Clock,
  ) {}

  async get(db: Executor, owner: BankAccountOwner): Promise<BankAccount> {
    const row = await db
      .selectFrom('bank_accounts')
      .select(['iban_masked', 'country', 'bic', 'holder_name', 'updated_at'])
      .where('owner', '=', ownerKey(owner))
      .executeTakeFirst();
    if (!row) throw notFound('bank account');
    return toBankAccount(row);
  }

  /** Sets (or replaces) the owner's account; the caller has checked the owner is the tenant's. */
  async put(db: Executor, owner: BankAccountOwner, input: BankAccountInput): Promise<BankAccount> {
    const key = ownerKey(owner);
    const now = this.clock.now();
    const values = {
      iban_enc: this.encryptor.encrypt(input.iban, `bank-account:${key}`),
      iban_masked: maskIban(input.iban),
      country: input.iban.slice(0, 2),
      bic: input.bic ?? null,
      holder_name: input.holderName,
      updated_at: now,
    };
    const before = await db
      .selectFrom('bank_accounts')
      .select(['iban_masked', 'bic', 'holder_name'])
      .where('owner', '=', key)
      .executeTakeFirst();
    const row = await db
      .insertInto('bank_accounts')
      .values({ owner: key, ...values, created_at: now })
      .onConflict((oc) => oc.column('owner').doUpdateSet(values))
      .returning(['iban_masked', 'country', 'bic', 'holder_name', 'updated_at'])
      .executeTakeFirstOrThrow();
    // Masked both: the audit trail never holds an IBAN.
    noteChange(`bank account of ${key}`, before ?? null, {
      iban_masked: row.iban_masked,
      bic: row.bic,
      holder_name: row.holder_name,
    });
    return toBankAccount(row);
  }
}

function toBankAccount(row: {
  iban_masked: string;
  country: string;
  bic: string | null;
  holder_name: string;
  updated_at: Date;
}): BankAccount {
  return {
    iban: row.iban_masked,
    country: row.country,
    bic: row.bic,
    holderName: row.holder_name,
    updatedAt: row.updated_at,
  };
}
