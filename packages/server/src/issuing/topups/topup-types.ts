// A topup as the issuing API, its hosted page and its services see it (docs/issuing.md, Topups): the row,
// the view, what a new one starts as, a customer's usage of the limits, and the sandbox bank's account.
import type { Selectable, Updateable } from 'kysely';
import type { Tx } from '../../platform/db/database.ts';
import type { IssuingTopupsTable } from '../../platform/db/schema.ts';
import type { ClientAmount } from '../../platform/money/amount.ts';
import type { Asset } from '../../platform/money/assets.ts';

/** How long bank-transfer instructions stay valid (default: 7 days) */
export const BANK_TRANSFER_TTL_SECONDS = 7 * 24 * 3600;
/** The sandbox bank's account the customer transfers to */
export const SANDBOX_BANK = {
  beneficiary: 'Tessera Sandbox Client Funds',
  iban: 'RO49AAAA1B31007593840000',
  bic: 'TSRARO22',
};

export type TopupRow = Selectable<IssuingTopupsTable>;
export type TopupPatch = Updateable<IssuingTopupsTable>;

export interface Topup {
  topupId: string;
  accountId: string;
  kind: 'fiat' | 'crypto';
  method: 'bank_transfer' | 'card' | 'crypto';
  status: 'pending' | 'confirming' | 'completed' | 'expired';
  currency: string;
  amount: bigint;
  reference: string;
  /** The hosted page where a pending fiat topup can be paid by card */
  paymentUrl: string | null;
  /** Why the last card attempt failed (the topup stays payable) */
  lastDecline: string | null;
  crypto: {
    currency: string;
    network: string;
    amount: bigint;
    depositAddress: string;
    rateE18: bigint;
    fee: bigint;
    received: bigint | null;
    confirmations: number;
    confirmationsRequired: number;
  } | null;
  creditedAmount: bigint | null;
  expiresAt: Date;
  createdAt: Date;
  completedAt: Date | null;
}

/** What a new topup starts as; the kind-specific columns come from card or crypto topups. */
export interface NewTopup {
  accountId: string;
  amount: ClientAmount;
  kind: 'fiat' | 'crypto';
  method: 'bank_transfer' | 'crypto';
  ttlSeconds: number;
  /** Crypto columns, computed once the account's currency is known */
  extra?: (
    tx: Tx,
    account: { currency: string; asset: Asset; amount: bigint; topupId: string },
  ) => Promise<TopupPatch>;
}

export interface TopupUsage {
  currency: string;
  daily: { limit: bigint; used: bigint; remaining: bigint };
  monthly: { limit: bigint; used: bigint; remaining: bigint };
}
