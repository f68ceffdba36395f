// Customer accounts of the card issuing API (docs/issuing.md, Accounts): open one per currency
// once KYC is approved, list them with their ledger balances, close one only at zero with no hold.

import { randomUUID } from 'node:crypto';
import type { Clock } from '../../platform/clock/clock.ts';
import type { Db, Executor } from '../../platform/db/database.ts';
import { PG_ERRORS, pgErrorCode } from '../../platform/db/database.ts';
import type { Transact } from '../../platform/db/transact.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import { isUuid } from '../../platform/ids.ts';
import { type Ledger, lockBounded } from '../../platform/ledger/ledger.ts';
import { formatAmountIn } from '../../platform/money/amount.ts';
import { findAsset } from '../../platform/money/assets.ts';
import type { CardsService } from '../cards/cards-service.ts';
import type { CustomerRef, KycService } from '../kyc/kyc-service.ts';
import { accountStatement } from './account-statement.ts';

export interface Account {
  accountId: string;
  customerId: string;
  currency: string;
  status: 'open' | 'closed';
  /** Posted balance, in minor units */
  balance: bigint;
  /** What can be spent now: balance minus pending holds */
  available: bigint;
  /** Held by pending authorizations */
  pending: bigint;
  ledgerAccountId: string;
  createdAt: Date;
  closedAt: Date | null;
}

export interface AccountsDeps {
  db: Db;
  transact: Transact;
  clock: Clock;
  ledger: Ledger;
  kyc: KycService;
  /** Closes the cards of an account that closes, with their events */
  cards: Pick<CardsService, 'closeAllOf'>;
}

export class AccountsService {
  constructor(private readonly deps: AccountsDeps) {}

  async open(customer: CustomerRef, currency: string): Promise<Account> {
    const asset = findAsset(currency);
    if (asset?.kind !== 'fiat') {
      throw new DomainError('validation_failed', 'currency must be an ISO 4217 fiat currency code', {
        field: 'currency',
      });
    }
    return this.deps.transact(async (tx) => {
      if (!(await this.deps.kyc.isApproved(tx, customer.customerId))) {
        throw new DomainError('invalid_state', 'accounts can be opened once KYC is approved');
      }
      const id = randomUUID();
      const ledgerAccount = await this.deps.ledger.openAccount(tx, {
        ownerType: 'issuing_account',
        ownerId: id,
        asset: asset.code,
        purpose: 'balance',
        isBounded: true,
      });
      try {
        await tx
          .insertInto('issuing_accounts')
          .values({
            id,
            customer_id: customer.customerId,
            partner_id: customer.partnerId,
            currency: asset.code,
            status: 'open',
            ledger_account_id: ledgerAccount.id,
            created_at: this.deps.clock.now(),
          })
          .execute();
      } catch (err) {
        if (pgErrorCode(err) === PG_ERRORS.uniqueViolation) {
          throw new DomainError('conflict', `an open ${asset.code} account already exists`, {
            field: 'currency',
          });
        }
        throw err;
      }
      return this.get(tx, customer, id);
    });
  }

  async list(customer: CustomerRef, filter: { currency?: string } = {}): Promise<Account[]> {
    let query = this.baseQuery(this.deps.db)
      .where('a.customer_id', '=', customer.customerId)
      .orderBy('a.seq');
    if (filter.currency) query = query.where('a.currency', '=', filter.currency.toUpperCase());
    return (await query.execute()).map(toAccount);
  }

  /** One of the customer's accounts; another customer's is a 404 like an unknown one. */
  async get(db: Executor, customer: CustomerRef, accountId: string): Promise<Account> {
    if (!isUuid(accountId)) throw notFound('account');
    const row = await this.baseQuery(db)
      .where('a.id', '=', accountId)
      .where('a.customer_id', '=', customer.customerId)
      .executeTakeFirst();
    if (!row) throw notFound('account');
    return toAccount(row);
  }

  /** The account's statement for a month (account-statement.ts); another customer's is a 404. */
  async statement(customer: CustomerRef, accountId: string, month: string): Promise<string> {
    return accountStatement(this.deps.db, await this.get(this.deps.db, customer, accountId), month);
  }

  /** Closes the account when nothing is left on it and nothing is held; otherwise a 409 naming why. */
  async close(customer: CustomerRef, accountId: string): Promise<Account> {
    return this.deps.transact(async (tx) => {
      const account = await this.get(tx, customer, accountId);
      // Lock the ledger account so a concurrent credit or hold cannot slip in before the close commits.
      await lockBounded(tx, [account.ledgerAccountId]);
      const fresh = await this.get(tx, customer, accountId);
      if (fresh.status === 'closed')
        throw new DomainError('invalid_state', 'the account is already closed', {
          details: { status: 'closed' },
        });
      // Amounts in details are decimals in the account's currency, as everywhere in the API.
      const decimal = (minor: bigint) => formatAmountIn(minor, fresh.currency);
      if (fresh.pending !== 0n) {
        throw new DomainError('invalid_state', 'the account has pending authorizations', {
          details: { pending: decimal(fresh.pending), currency: fresh.currency },
        });
      }
      if (fresh.balance !== 0n) {
        throw new DomainError('invalid_state', 'the account balance must be zero to close it', {
          details: { balance: decimal(fresh.balance), currency: fresh.currency },
        });
      }
      await tx
        .updateTable('issuing_accounts')
        .set({ status: 'closed', closed_at: this.deps.clock.now() })
        .where('id', '=', accountId)
        .execute();
      await this.deps.cards.closeAllOf(tx, customer, accountId);
      return this.get(tx, customer, accountId);
    });
  }

  private baseQuery(db: Executor) {
    return db
      .selectFrom('issuing_accounts as a')
      .innerJoin('ledger_balances as l', 'l.id', 'a.ledger_account_id')
      .select([
        'a.id',
        'a.customer_id',
        'a.currency',
        'a.status',
        'a.ledger_account_id',
        'a.created_at',
        'a.closed_at',
        'l.posted',
        'l.pending_debits',
      ]);
  }
}

function toAccount(row: {
  id: string;
  customer_id: string;
  currency: string;
  status: 'open' | 'closed';
  ledger_account_id: string;
  created_at: Date;
  closed_at: Date | null;
  posted: string;
  pending_debits: string;
}): Account {
  const balance = BigInt(row.posted);
  const pending = BigInt(row.pending_debits);
  return {
    accountId: row.id,
    customerId: row.customer_id,
    currency: row.currency,
    status: row.status,
    balance,
    available: balance - pending,
    pending,
    ledgerAccountId: row.ledger_account_id,
    createdAt: row.created_at,
    closedAt: row.closed_at,
  };
}
