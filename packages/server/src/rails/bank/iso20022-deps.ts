// What the ISO 20022 bank and its outbox and inbox are built from.
import type { Logger } from 'pino';
import type { Clock } from '../../platform/clock/clock.ts';
import type { Encryptor } from '../../platform/crypto/encryption.ts';
import type { Db } from '../../platform/db/database.ts';
import type { Transact } from '../../platform/db/transact.ts';
import type { DebtorAccount } from '../../platform/payouts/money-out-config.ts';
import type { PayoutLifecycle } from '../../platform/payouts/payout-lifecycle.ts';

export interface Iso20022Deps {
  db: Db;
  transact: Transact;
  clock: Clock;
  encryptor: Encryptor;
  lifecycle: PayoutLifecycle;
  logger: Logger;
  debtor: DebtorAccount;
  outboxDir: string;
  inboxDir: string;
  /** Counts inbox files by outcome (metric) */
  onInboxFile?: (outcome: 'applied' | 'rejected' | 'unmatched') => void;
}
