// Money out's configuration (README, Configuration; docs/payouts.md): the default fee and payout schedules
// and the bank rail with the operator's own account. Read once at boot; every mistake is a configuration
// error naming the variable.
import { join } from 'node:path';
import { electronicFormatIBAN, isValidBIC, isValidIBAN } from 'ibantools';
import type { TermsDefaults } from './terms.ts';
import { parseFixedFees } from './terms.ts';

export interface DebtorAccount {
  iban: string;
  bic: string | undefined;
  name: string;
}

export interface MoneyOutConfig {
  defaults: TermsDefaults;
  /**
   * The folders are known on either rail: payouts sent as files before a switch to the simulator still
   * have their bank's reports read from the inbox (docs/payouts.md, Switching the bank rail).
   */
  bank: { rail: 'simulator' | 'iso20022'; debtor: DebtorAccount; outboxDir: string; inboxDir: string };
}

export interface MoneyOutEnv {
  TESSERA_MODE: 'sandbox' | 'production';
  TESSERA_DATA_DIR: string;
  TESSERA_FEE_PERCENT_BPS: number;
  TESSERA_FEE_FIXED: string;
  TESSERA_PAYOUT_INTERVAL: 'daily' | 'weekly' | 'monthly' | 'manual';
  TESSERA_PAYOUT_DELAY_DAYS: number;
  TESSERA_PAYOUT_MINIMUM: string;
  TESSERA_BANK_RAIL: 'simulator' | 'iso20022';
  TESSERA_BANK_OUTBOX_DIR?: string | undefined;
  TESSERA_BANK_INBOX_DIR?: string | undefined;
  TESSERA_BANK_DEBTOR_IBAN?: string | undefined;
  TESSERA_BANK_DEBTOR_BIC?: string | undefined;
  TESSERA_BANK_DEBTOR_NAME: string;
}

/** A valid sample IBAN the sandbox pays from when none is configured. */
const SANDBOX_DEBTOR_IBAN = 'DE89370400440532013000';

export function parseMoneyOutConfig(e: MoneyOutEnv, problems: string[]): MoneyOutConfig {
  let fixed: Record<string, bigint> = {};
  try {
    const pairs = e.TESSERA_FEE_FIXED.split(',')
      .map((pair) => pair.trim())
      .filter(Boolean)
      .map((pair) => pair.split(':') as [string, string]);
    fixed = parseFixedFees(Object.fromEntries(pairs), 'TESSERA_FEE_FIXED');
  } catch {
    problems.push('TESSERA_FEE_FIXED: must be CODE:amount pairs, comma-separated (EUR:0.25,USD:0.30)');
  }
  const ibanText =
    e.TESSERA_BANK_DEBTOR_IBAN ?? (e.TESSERA_MODE === 'sandbox' ? SANDBOX_DEBTOR_IBAN : undefined);
  const iban = ibanText ? (electronicFormatIBAN(ibanText) ?? '') : '';
  if (ibanText && !isValidIBAN(iban)) problems.push('TESSERA_BANK_DEBTOR_IBAN: must be a valid IBAN');
  if (!ibanText && e.TESSERA_BANK_RAIL === 'iso20022') {
    problems.push(
      'TESSERA_BANK_DEBTOR_IBAN: required with TESSERA_BANK_RAIL=iso20022 (the account payouts are paid from)',
    );
  }
  const bic = e.TESSERA_BANK_DEBTOR_BIC?.toUpperCase();
  if (bic && !isValidBIC(bic))
    problems.push('TESSERA_BANK_DEBTOR_BIC: must be a valid BIC (8 or 11 characters)');
  const debtor = { iban, bic, name: e.TESSERA_BANK_DEBTOR_NAME };
  return {
    defaults: {
      fees: { percentBps: e.TESSERA_FEE_PERCENT_BPS, fixed, brands: {}, refundFees: false },
      schedule: {
        interval: e.TESSERA_PAYOUT_INTERVAL,
        weeklyAnchor: 'monday',
        monthlyAnchor: 1,
        minimum: e.TESSERA_PAYOUT_MINIMUM,
        delayDays: e.TESSERA_PAYOUT_DELAY_DAYS,
        reserveBps: 0,
        reserveDays: 0,
      },
    },
    bank: {
      rail: e.TESSERA_BANK_RAIL,
      debtor,
      outboxDir: e.TESSERA_BANK_OUTBOX_DIR ?? join(e.TESSERA_DATA_DIR, 'bank', 'outbox'),
      inboxDir: e.TESSERA_BANK_INBOX_DIR ?? join(e.TESSERA_DATA_DIR, 'bank', 'inbox'),
    },
  };
}
