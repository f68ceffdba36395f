// The ledger's accounts: opened once per owner, asset and purpose (system accounts in shards, in one
// statement), read with their balances, and their never-changing facts (asset, bound) remembered once
// committed, which lets a posting be written as plain rows (posting-rows.ts). The Ledger (ledger.ts) posts.
import { sql } from 'kysely';
import { afterCommit } from '../db/connection-scope.ts';
import type { Executor } from '../db/database.ts';
import { newId } from '../ids.ts';
import type { LedgerAccount, OpenAccountInput } from './ledger-types.ts';
import type { AccountFacts } from './posting-rows.ts';

/** Accounts whose facts a ledger keeps at most (past it, the memory starts over) */
const KNOWN_ACCOUNTS = 100_000;

export class LedgerAccounts {
  /** Ids of accounts known to be committed, by owner, asset and purpose (accounts are never deleted) */
  private readonly knownAccounts = new Map<string, string[]>();
  /** What never changes of accounts this ledger opened or found, by id: their asset and bound */
  protected readonly accountFacts = new Map<string, AccountFacts>();

  constructor(protected readonly now: () => Date) {}

  /**
   * The ids of a system account split into shards, one per purpose (a site's balance, a network's
   * receivable), opened on first use all at once in one statement, inside the caller's transaction: never
   * on a second connection, which could wait forever for a pool held by transactions like this one. They
   * are remembered once that is committed, so a remembered id never points at an account whose creation
   * rolled back.
   */
  async systemAccounts(
    tx: Executor,
    input: Omit<OpenAccountInput, 'purpose'>,
    purposes: readonly string[],
  ): Promise<string[]> {
    const key = `${input.ownerType}\u0000${input.ownerId}\u0000${input.asset}\u0000${purposes.join('\u0000')}`;
    const known = this.knownAccounts.get(key);
    if (known) return known;
    const byPurpose = new Map<string, string>();
    const bounded = new Map<string, boolean>();
    // A concurrent opener's rows are invisible to this statement's snapshot: a second look finds them.
    for (let attempt = 0; attempt < 2 && byPurpose.size < purposes.length; attempt++) {
      const missing = purposes.filter((purpose) => !byPurpose.has(purpose));
      const { rows } = await sql<{ id: string; purpose: string; is_bounded: boolean }>`
        WITH opened AS (
          INSERT INTO ledger_accounts (id, owner_type, owner_id, asset, purpose, is_bounded, created_at)
          SELECT * FROM unnest(${missing.map(() => newId('ledgerAccount'))}::text[], ${missing.map(() => input.ownerType)}::text[],
            ${missing.map(() => input.ownerId)}::text[], ${missing.map(() => input.asset)}::text[], ${missing}::text[],
            ${missing.map(() => input.isBounded)}::boolean[], ${missing.map(() => this.now())}::timestamptz[])
          ON CONFLICT (owner_type, owner_id, asset, purpose) DO NOTHING
          RETURNING id, purpose, is_bounded
        )
        SELECT id, purpose, is_bounded FROM opened
        UNION ALL
        SELECT id, purpose, is_bounded FROM ledger_accounts
        WHERE owner_type = ${input.ownerType} AND owner_id = ${input.ownerId} AND asset = ${input.asset}
          AND purpose = ANY(${missing}::text[])`.execute(tx);
      for (const row of rows) {
        byPurpose.set(row.purpose, row.id);
        bounded.set(row.id, row.is_bounded);
      }
    }
    const ids = purposes.map((purpose) => byPurpose.get(purpose));
    if (ids.some((id) => id === undefined)) throw new Error('system accounts neither opened nor found');
    afterCommit(() => {
      this.knownAccounts.set(key, ids as string[]);
      for (const [id, isBounded] of bounded) this.learn(id, { asset: input.asset, isBounded });
    });
    return ids as string[];
  }

  /** One system account: systemAccounts with one purpose. */
  async systemAccount(tx: Executor, input: OpenAccountInput): Promise<string> {
    const [id] = await this.systemAccounts(tx, input, [input.purpose]);
    return id as string;
  }

  /**
   * Opens the account, or returns the existing one with the same owner, asset and purpose. An existing
   * account is only read, never rewritten: system accounts are "opened" on hot paths.
   */
  async openAccount(db: Executor, input: OpenAccountInput): Promise<LedgerAccount> {
    return (await this.open(db, input)).account;
  }

  private async open(
    db: Executor,
    input: OpenAccountInput,
  ): Promise<{ account: LedgerAccount; isNew: boolean }> {
    const inserted = await db
      .insertInto('ledger_accounts')
      .values({
        id: newId('ledgerAccount'),
        owner_type: input.ownerType,
        owner_id: input.ownerId,
        asset: input.asset,
        purpose: input.purpose,
        is_bounded: input.isBounded,
        created_at: this.now(),
      })
      .onConflict((oc) => oc.columns(['owner_type', 'owner_id', 'asset', 'purpose']).doNothing())
      .returningAll()
      .executeTakeFirst();
    const account = inserted ? toAccount(inserted) : await this.findAccount(db, input);
    if (!account) throw new Error('a ledger account neither inserted nor found');
    afterCommit(() => this.learn(account.id, account));
    return { account, isNew: inserted !== undefined };
  }

  /** Remembers an account's facts once its opening is committed (a remembered account exists). */
  private learn(id: string, facts: AccountFacts): void {
    if (this.accountFacts.size >= KNOWN_ACCOUNTS) {
      // Starting over forgets the system accounts too, so their next use reads them and learns them again.
      this.accountFacts.clear();
      this.knownAccounts.clear();
    }
    this.accountFacts.set(id, { asset: facts.asset, isBounded: facts.isBounded });
  }

  /** The account with this owner, asset and purpose, if it was ever opened (reads only). */
  async findAccount(
    db: Executor,
    input: Omit<OpenAccountInput, 'isBounded'>,
  ): Promise<LedgerAccount | undefined> {
    const row = await db
      .selectFrom('ledger_balances')
      .selectAll()
      .where('owner_type', '=', input.ownerType)
      .where('owner_id', '=', input.ownerId)
      .where('asset', '=', input.asset)
      .where('purpose', '=', input.purpose)
      .executeTakeFirst();
    return row ? toAccount(row) : undefined;
  }

  async getAccount(db: Executor, accountId: string): Promise<LedgerAccount | undefined> {
    const row = await db
      .selectFrom('ledger_balances')
      .selectAll()
      .where('id', '=', accountId)
      .executeTakeFirst();
    return row ? toAccount(row) : undefined;
  }
}

function toAccount(row: {
  id: string;
  owner_type: string;
  owner_id: string;
  asset: string;
  purpose: string;
  is_bounded: boolean;
  posted: string;
  pending_debits: string;
  pending_credits: string;
}): LedgerAccount {
  const posted = BigInt(row.posted);
  const pendingDebits = BigInt(row.pending_debits);
  return {
    id: row.id,
    ownerType: row.owner_type,
    ownerId: row.owner_id,
    asset: row.asset,
    purpose: row.purpose,
    isBounded: row.is_bounded,
    posted,
    pendingDebits,
    pendingCredits: BigInt(row.pending_credits),
    available: posted - pendingDebits,
  };
}
