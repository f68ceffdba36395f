import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../test/harness/test-database.ts';
import { SandboxClock } from '../clock/clock.ts';
import { type DatabaseHandle, openDatabase, type Tx } from '../db/database.ts';
import { StatementBatch } from '../db/statement-batch.ts';
import { DomainError } from '../errors/domain-error.ts';
import { Ledger, type LedgerAccount, ledgerRefusal, lockBounded } from './ledger.ts';

let handle: DatabaseHandle;
const clock = new SandboxClock();
const ledger = new Ledger(() => clock.now());

beforeAll(async () => {
  handle = openDatabase(await createTestDatabase(), { max: 30 });
});
afterAll(async () => {
  await handle.close();
});

const tx = <T>(fn: (t: Tx) => Promise<T>) => handle.db.transaction().execute(fn);
const op = () => `op_${randomUUID()}`;

async function accounts(asset = 'EUR') {
  const owner = randomUUID();
  const open = (purpose: string, isBounded: boolean) =>
    ledger.openAccount(handle.db, { ownerType: 'test', ownerId: owner, asset, purpose, isBounded });
  return {
    world: await open('world', false),
    alice: await open('alice', true),
    bob: await open('bob', true),
  };
}

const balance = async (account: LedgerAccount) =>
  (await ledger.getAccount(handle.db, account.id)) as LedgerAccount;
const transfer = (from: LedgerAccount, to: LedgerAccount, amount: bigint, operationId = op()) =>
  handle.db.transaction().execute((t) =>
    ledger.transfer(t, {
      operationId,
      legs: [
        { accountId: from.id, amount: -amount },
        { accountId: to.id, amount },
      ],
    }),
  );
const errorOf = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error('expected a DomainError');
};

describe('accounts', () => {
  it('opens one account per owner, asset and purpose', async () => {
    const { alice } = await accounts();
    const again = await ledger.openAccount(handle.db, {
      ownerType: alice.ownerType,
      ownerId: alice.ownerId,
      asset: 'EUR',
      purpose: 'alice',
      isBounded: true,
    });
    expect(again.id).toBe(alice.id);
    expect(alice).toMatchObject({ posted: 0n, pendingDebits: 0n, available: 0n, isBounded: true });
  });
});

describe('transfers', () => {
  it('moves money in balanced entries', async () => {
    const { world, alice, bob } = await accounts();
    await transfer(world, alice, 1000n);
    const result = await transfer(alice, bob, 250n);
    expect(result.legs.reduce((s, l) => s + l.amount, 0n)).toBe(0n);
    expect((await balance(alice)).posted).toBe(750n);
    expect((await balance(bob)).posted).toBe(250n);
    expect((await balance(world)).posted).toBe(-1000n);
  });

  it('refuses unbalanced, one-sided, cross-asset and unknown-account transfers', async () => {
    const { world, alice } = await accounts();
    const usd = await accounts('USD');
    const legs = (a: bigint, b: bigint) => [
      { accountId: world.id, amount: a },
      { accountId: alice.id, amount: b },
    ];
    expect(
      (await errorOf(tx((t) => ledger.transfer(t, { operationId: op(), legs: legs(-5n, 4n) })))).message,
    ).toMatch(/balance/);
    expect(
      (await errorOf(tx((t) => ledger.transfer(t, { operationId: op(), legs: legs(-5n, 0n) })))).code,
    ).toBe('validation_failed');
    expect((await errorOf(transfer(world, usd.alice, 5n))).message).toMatch(/one asset/);
    const ghost = { ...alice, id: 'lac_missing' };
    expect((await errorOf(transfer(world, ghost, 5n))).code).toBe('not_found');
  });

  it('never lets a bounded account go negative, and writes nothing when refusing', async () => {
    const { world, alice, bob } = await accounts();
    await transfer(world, alice, 100n);
    const refused = await errorOf(transfer(alice, bob, 101n));
    expect(refused.code).toBe('limit_exceeded');
    expect(refused.details).toMatchObject({ reason: 'insufficient_funds', accountId: alice.id });
    expect((await balance(alice)).posted).toBe(100n);
    const { rows } = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM ledger_entries WHERE account_id = ${bob.id}`.execute(handle.db);
    expect(rows[0]?.n).toBe(0);
  });

  it('is idempotent by operation id, and refuses the id for another operation', async () => {
    const { world, alice, bob } = await accounts();
    const id = op();
    const first = await transfer(world, alice, 100n, id);
    const again = await transfer(world, alice, 100n, id);
    expect(first.isReplay).toBe(false);
    expect(again).toMatchObject({ isReplay: true, id: first.id });
    expect((await balance(alice)).posted).toBe(100n);
    expect((await errorOf(transfer(world, bob, 100n, id))).code).toBe('conflict');
  });

  it('replays a spend even after the funds it spent are gone', async () => {
    const { world, alice, bob } = await accounts();
    await transfer(world, alice, 100n);
    const id = op();
    await transfer(alice, bob, 100n, id);
    expect((await transfer(alice, bob, 100n, id)).isReplay).toBe(true);
  });
});

describe('the tables behind the function', () => {
  // The last line of defence (migration 0043: one CHECK per table; 0048, 0049: the one-column ones as domains):
  // rows the ledger never writes are refused even when written around ledger_post.
  const refusal = async (statement: ReturnType<typeof sql>) => {
    try {
      await statement.execute(handle.db);
    } catch (err) {
      return (err as { constraint?: string }).constraint;
    }
    return 'written';
  };

  it('refuses a bounded balance below zero, negative pending amounts, unknown kinds, negative credits, empty entries', async () => {
    const { world, alice } = await accounts();
    const operationId = op();
    await transfer(world, alice, 100n, operationId);
    expect(await refusal(sql`UPDATE ledger_accounts SET posted = posted - 101 WHERE id = ${alice.id}`)).toBe(
      'ledger_accounts_bounded',
    );
    expect(await refusal(sql`UPDATE ledger_accounts SET pending_debits = 101 WHERE id = ${alice.id}`)).toBe(
      'ledger_accounts_bounded',
    );
    // An unbounded account may go below zero, never its pending amounts (domains since migration 0049).
    expect(await refusal(sql`UPDATE ledger_accounts SET pending_credits = -1 WHERE id = ${world.id}`)).toBe(
      'ledger_accounts_pending_credits_check',
    );
    expect(await refusal(sql`UPDATE ledger_accounts SET pending_debits = -1 WHERE id = ${world.id}`)).toBe(
      'ledger_accounts_pending_debits_check',
    );
    expect(await refusal(sql`UPDATE ledger_accounts SET pending_debits = -1 WHERE id = ${alice.id}`)).toBe(
      'ledger_accounts_pending_debits_check',
    );
    expect(
      await refusal(sql`UPDATE ledger_transactions SET kind = 'gift' WHERE operation_id = ${operationId}`),
    ).toBe('ledger_transactions_kind_check');
    expect(
      await refusal(sql`UPDATE ledger_transactions SET status = 'lost' WHERE operation_id = ${operationId}`),
    ).toBe('ledger_transactions_status_check');
    expect(
      await refusal(
        sql`INSERT INTO ledger_account_credits (account_id, posted, pending_credits) VALUES (${alice.id}, -1, 0)`,
      ),
    ).toBe('ledger_account_credits_posted_check');
    expect(
      await refusal(
        sql`INSERT INTO ledger_entries (transaction_id, account_id, asset, amount) VALUES ('ltx_none', ${alice.id}, 'EUR', 0)`,
      ),
    ).toBe('ledger_entries_amount_check');
    expect((await balance(alice)).posted).toBe(100n);
  });
});

describe('holds', () => {
  it('reserves, then posts the same or a smaller amount and releases the rest', async () => {
    const { world, alice, bob } = await accounts();
    await transfer(world, alice, 1000n);
    const hold = await tx((t) =>
      ledger.hold(t, { operationId: op(), debitAccountId: alice.id, creditAccountId: bob.id, amount: 600n }),
    );
    expect(hold.status).toBe('pending');
    expect(await balance(alice)).toMatchObject({ posted: 1000n, pendingDebits: 600n, available: 400n });
    expect((await balance(bob)).pendingCredits).toBe(600n);
    expect((await errorOf(transfer(alice, bob, 401n))).code).toBe('limit_exceeded');
    expect(
      (await errorOf(tx((t) => ledger.postHold(t, { operationId: op(), holdId: hold.id, amount: 601n }))))
        .field,
    ).toBe('amount');
    const postId = op();
    const posted = await tx((t) =>
      ledger.postHold(t, { operationId: postId, holdId: hold.id, amount: 450n }),
    );
    expect(posted).toMatchObject({ kind: 'hold_post', holdId: hold.id, status: 'posted' });
    expect(await balance(alice)).toMatchObject({ posted: 550n, pendingDebits: 0n, available: 550n });
    expect(await balance(bob)).toMatchObject({ posted: 450n, pendingCredits: 0n });
    expect((await ledger.getTransaction(handle.db, hold.id))?.status).toBe('settled');
    const replay = await tx((t) =>
      ledger.postHold(t, { operationId: postId, holdId: hold.id, amount: 450n }),
    );
    expect(replay).toMatchObject({ isReplay: true, id: posted.id });
    expect((await errorOf(tx((t) => ledger.postHold(t, { operationId: op(), holdId: hold.id })))).code).toBe(
      'invalid_state',
    );
    expect((await balance(alice)).posted).toBe(550n);
  });

  it('refuses a hold beyond the available balance', async () => {
    const { world, alice, bob } = await accounts();
    await transfer(world, alice, 100n);
    const refused = await errorOf(
      tx((t) =>
        ledger.hold(t, {
          operationId: op(),
          debitAccountId: alice.id,
          creditAccountId: bob.id,
          amount: 101n,
        }),
      ),
    );
    expect(refused.code).toBe('limit_exceeded');
  });

  it('voids without moving money; a second void changes nothing; a voided hold cannot post', async () => {
    const { world, alice, bob } = await accounts();
    await transfer(world, alice, 100n);
    const hold = await tx((t) =>
      ledger.hold(t, { operationId: op(), debitAccountId: alice.id, creditAccountId: bob.id, amount: 70n }),
    );
    await tx((t) => ledger.voidHold(t, hold.id));
    await tx((t) => ledger.voidHold(t, hold.id));
    expect(await balance(alice)).toMatchObject({ posted: 100n, pendingDebits: 0n, available: 100n });
    expect((await ledger.getTransaction(handle.db, hold.id))?.status).toBe('voided');
    expect((await errorOf(tx((t) => ledger.postHold(t, { operationId: op(), holdId: hold.id })))).code).toBe(
      'invalid_state',
    );
  });

  it('expires a hold: its funds come back, its expiry kept on the transaction', async () => {
    const { world, alice, bob } = await accounts();
    await transfer(world, alice, 100n);
    const expiresAt = new Date(clock.now().getTime() + 3_600_000);
    const hold = await tx((t) =>
      ledger.hold(t, {
        operationId: op(),
        debitAccountId: alice.id,
        creditAccountId: bob.id,
        amount: 40n,
        expiresAt,
      }),
    );
    expect((await ledger.getTransaction(handle.db, hold.id))?.expiresAt).toEqual(expiresAt);
    expect((await balance(alice)).available).toBe(60n);
    clock.advance(3_600_000);
    await tx((t) => ledger.expireHold(t, hold.id));
    expect((await ledger.getTransaction(handle.db, hold.id))?.status).toBe('expired');
    expect((await balance(alice)).available).toBe(100n);
  });
});

describe('invariants over random operation sequences', () => {
  type Step =
    | { kind: 'fund'; to: number; amount: bigint }
    | { kind: 'transfer'; from: number; to: number; amount: bigint }
    | { kind: 'hold'; from: number; to: number; amount: bigint }
    | { kind: 'post'; hold: number; fraction: number }
    | { kind: 'void'; hold: number }
    | { kind: 'replay'; step: number }
    | { kind: 'rollup' };

  // party 3 is the unbounded world account: its postings are deltas until a rollup step moves them
  const party = fc.integer({ min: 0, max: 3 });
  const amount = fc.bigInt({ min: 1n, max: 500n });
  const step: fc.Arbitrary<Step> = fc.oneof(
    fc.record({ kind: fc.constant('fund' as const), to: party, amount }),
    fc.record({ kind: fc.constant('transfer' as const), from: party, to: party, amount }),
    fc.record({ kind: fc.constant('hold' as const), from: party, to: party, amount }),
    fc.record({
      kind: fc.constant('post' as const),
      hold: fc.nat(20),
      fraction: fc.double({ min: 0.01, max: 1, noNaN: true }),
    }),
    fc.record({ kind: fc.constant('void' as const), hold: fc.nat(20) }),
    fc.record({ kind: fc.constant('replay' as const), step: fc.nat(30) }),
    fc.record({ kind: fc.constant('rollup' as const) }),
  );

  it('per asset the entries sum to zero, balances equal their entries, bounds hold, and a model agrees', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 30 }), async (steps) => {
        const set = await accounts();
        // party 2 is a bounded account of another owner, so transfers cross owners too
        const parties = [set.alice, set.bob, (await accounts()).alice, set.world];
        const model = new Map<string, { posted: bigint; pending: bigint }>(
          [set.world, ...parties].map((a) => [a.id, { posted: 0n, pending: 0n }]),
        );
        const bump = (accountId: string, field: 'posted' | 'pending', delta: bigint) => {
          const entry = model.get(accountId);
          if (entry) entry[field] += delta;
        };
        const holds: { id: string; from: string; to: string; amount: bigint; open: boolean }[] = [];
        const done: { operationId: string; run: (id: string) => Promise<unknown> }[] = [];
        const available = (id: string) => {
          const m = model.get(id);
          return m ? m.posted - m.pending : 0n;
        };
        for (const s of steps) {
          const id = op();
          try {
            if (s.kind === 'fund') {
              const to = parties[s.to] as LedgerAccount;
              if (to.id === set.world.id) continue;
              const run = (operationId: string) => transfer(set.world, to, s.amount, operationId);
              await run(id);
              done.push({ operationId: id, run });
              bump(set.world.id, 'posted', -s.amount);
              bump(to.id, 'posted', s.amount);
            } else if (s.kind === 'transfer' || s.kind === 'hold') {
              const from = parties[s.from] as LedgerAccount;
              const to = parties[s.to] as LedgerAccount;
              if (from.id === to.id) continue;
              const affordable = !from.isBounded || available(from.id) >= s.amount;
              if (s.kind === 'transfer') {
                const run = (operationId: string) => transfer(from, to, s.amount, operationId);
                const result = await errorOrValue(run(id));
                expect(result instanceof DomainError, `transfer affordable=${affordable}`).toBe(!affordable);
                if (!affordable) continue;
                done.push({ operationId: id, run });
                bump(from.id, 'posted', -s.amount);
                bump(to.id, 'posted', s.amount);
              } else {
                const result = await errorOrValue(
                  tx((t) =>
                    ledger.hold(t, {
                      operationId: id,
                      debitAccountId: from.id,
                      creditAccountId: to.id,
                      amount: s.amount,
                    }),
                  ),
                );
                expect(result instanceof DomainError).toBe(!affordable);
                if (!affordable || result instanceof DomainError) continue;
                holds.push({
                  id: (result as { id: string }).id,
                  from: from.id,
                  to: to.id,
                  amount: s.amount,
                  open: true,
                });
                bump(from.id, 'pending', s.amount);
              }
            } else if (s.kind === 'post' || s.kind === 'void') {
              const hold = holds[s.hold % Math.max(holds.length, 1)];
              if (!hold) continue;
              if (s.kind === 'void') {
                await tx((t) => ledger.voidHold(t, hold.id));
              } else {
                const postAmount = BigInt(Math.max(1, Math.floor(Number(hold.amount) * s.fraction)));
                const result = await errorOrValue(
                  tx((t) => ledger.postHold(t, { operationId: id, holdId: hold.id, amount: postAmount })),
                );
                expect(result instanceof DomainError).toBe(!hold.open);
                if (!hold.open) continue;
                bump(hold.from, 'posted', -postAmount);
                bump(hold.to, 'posted', postAmount);
              }
              if (hold.open) bump(hold.from, 'pending', -hold.amount);
              hold.open = false;
            } else if (s.kind === 'rollup') {
              await ledger.rollUp(handle.db, 3);
            } else {
              const earlier = done[s.step % Math.max(done.length, 1)];
              if (earlier) expect(await earlier.run(earlier.operationId)).toMatchObject({ isReplay: true });
            }
          } catch (err) {
            if (!(err instanceof DomainError)) throw err;
            throw new Error(`unexpected refusal at ${s.kind}: ${err.message}`);
          }
        }
        for (const [accountId, expected] of model) {
          const actual = (await ledger.getAccount(handle.db, accountId)) as LedgerAccount;
          expect(actual.posted).toBe(expected.posted);
          expect(actual.pendingDebits).toBe(expected.pending);
          if (actual.isBounded) expect(actual.available >= 0n && actual.posted >= 0n).toBe(true);
        }
        await assertLedgerInvariants();
      }),
      { numRuns: 25 },
    );
  });
});

describe('concurrency', () => {
  it('of many parallel spends racing for one balance, exactly the affordable ones succeed', async () => {
    const { world, alice, bob } = await accounts();
    await transfer(world, alice, 1000n);
    const results = await Promise.allSettled(Array.from({ length: 40 }, () => transfer(alice, bob, 100n)));
    const succeeded = results.filter((r) => r.status === 'fulfilled').length;
    const refused = results.filter(
      (r) => r.status === 'rejected' && r.reason instanceof DomainError && r.reason.code === 'limit_exceeded',
    ).length;
    expect(succeeded).toBe(10);
    expect(refused).toBe(30);
    expect(await balance(alice)).toMatchObject({ posted: 0n, available: 0n });
    expect((await balance(bob)).posted).toBe(1000n);
    await assertLedgerInvariants();
  });

  it('opposite transfers between the same accounts never deadlock', async () => {
    const { world, alice, bob } = await accounts();
    await transfer(world, alice, 10_000n);
    await transfer(world, bob, 10_000n);
    const results = await Promise.allSettled(
      Array.from({ length: 60 }, (_, i) =>
        i % 2 === 0 ? transfer(alice, bob, 7n) : transfer(bob, alice, 5n),
      ),
    );
    expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
    expect((await balance(alice)).posted + (await balance(bob)).posted).toBe(20_000n);
  });

  it('postings into one unbounded account take no lock, and rollups racing them lose nothing', async () => {
    const { world, alice } = await accounts();
    await transfer(world, alice, 100_000n);
    const hot = await ledger.openAccount(handle.db, {
      ownerType: 'test',
      ownerId: op(),
      asset: 'EUR',
      purpose: 'hot',
      isBounded: false,
    });
    const rollups = (async () => {
      let moved = 0;
      for (let i = 0; i < 20; i++) moved += await ledger.rollUp(handle.db, 7);
      return moved;
    })();
    await Promise.all(Array.from({ length: 60 }, () => transfer(alice, hot, 11n)));
    await rollups;
    expect((await balance(hot)).posted).toBe(660n);
    await ledger.rollUp(handle.db);
    const row = await sql<{ posted: string; deltas: string }>`
      SELECT posted::text, (SELECT count(*) FROM ledger_account_deltas WHERE account_id = ${hot.id})::text AS deltas
      FROM ledger_accounts WHERE id = ${hot.id}`.execute(handle.db);
    expect(row.rows[0]).toEqual({ posted: '660', deltas: '0' });
    await assertLedgerInvariants();
  });

  it('a credit to a bounded account takes no lock: it lands while another transaction holds the account', async () => {
    const { world, alice, bob } = await accounts();
    await transfer(world, alice, 500n);
    await handle.db.transaction().execute(async (t) => {
      await lockBounded(t, [bob.id]);
      // bob is locked by this open transaction; a credit to bob from another connection still commits
      await transfer(alice, bob, 200n);
      expect((await ledger.getAccount(t, bob.id))?.posted).toBe(200n);
    });
    // The waiting credit is folded in before a debit checks the bound: bob can spend it, exactly.
    expect((await errorOf(transfer(bob, alice, 201n))).code).toBe('limit_exceeded');
    await transfer(bob, alice, 200n);
    const row = await sql<{ posted: string; credits: string }>`
      SELECT posted::text, (SELECT count(*) FROM ledger_account_credits WHERE account_id = ${bob.id})::text AS credits
      FROM ledger_accounts WHERE id = ${bob.id}`.execute(handle.db);
    expect(row.rows[0]).toEqual({ posted: '0', credits: '0' });
    await assertLedgerInvariants();
  });

  it('credits, debits and rollups racing on one bounded account keep its bound and lose nothing', async () => {
    const { world, alice, bob } = await accounts();
    await transfer(world, alice, 100_000n);
    const rollups = (async () => {
      for (let i = 0; i < 20; i++) await ledger.rollUp(handle.db, 5);
    })();
    const results = await Promise.allSettled([
      ...Array.from({ length: 60 }, () => transfer(alice, bob, 10n)),
      ...Array.from({ length: 40 }, () => transfer(bob, world, 25n)),
    ]);
    await rollups;
    const debits = results.slice(60);
    expect(results.slice(0, 60).every((r) => r.status === 'fulfilled')).toBe(true);
    for (const r of debits) {
      if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'limit_exceeded' });
    }
    const spent = BigInt(debits.filter((r) => r.status === 'fulfilled').length) * 25n;
    expect((await balance(bob)).posted).toBe(600n - spent);
    await ledger.rollUp(handle.db);
    expect((await balance(bob)).posted).toBe(600n - spent);
    await assertLedgerInvariants();
  });

  it('one operation id sent concurrently moves money once', async () => {
    const { world, alice } = await accounts();
    const id = op();
    const results = await Promise.all(Array.from({ length: 10 }, () => transfer(world, alice, 50n, id)));
    expect(results.filter((r) => !r.isReplay)).toHaveLength(1);
    expect((await balance(alice)).posted).toBe(50n);
  });
});

async function errorOrValue<T>(promise: Promise<T>): Promise<T | DomainError> {
  try {
    return await promise;
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
}

/** The ledger's invariants over the whole database, checked in SQL. */
async function assertLedgerInvariants(): Promise<void> {
  const unbalanced = await sql<{ asset: string }>`
    SELECT asset FROM ledger_entries GROUP BY asset HAVING sum(amount) <> 0`.execute(handle.db);
  expect(unbalanced.rows).toEqual([]);
  const unbalancedTransactions = await sql<{ id: string }>`
    SELECT transaction_id AS id FROM ledger_entries GROUP BY transaction_id HAVING sum(amount) <> 0`.execute(
    handle.db,
  );
  expect(unbalancedTransactions.rows).toEqual([]);
  const drift = await sql<{ id: string }>`
    SELECT a.id FROM ledger_balances a
    LEFT JOIN LATERAL (
      SELECT
        coalesce(sum(e.amount) FILTER (WHERE t.status = 'posted'), 0) AS posted,
        coalesce(-sum(e.amount) FILTER (WHERE t.status = 'pending' AND e.amount < 0), 0) AS pending_debits,
        coalesce(sum(e.amount) FILTER (WHERE t.status = 'pending' AND e.amount > 0), 0) AS pending_credits
      FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id WHERE e.account_id = a.id
    ) s ON true
    WHERE a.posted <> s.posted OR a.pending_debits <> s.pending_debits OR a.pending_credits <> s.pending_credits`.execute(
    handle.db,
  );
  expect(drift.rows).toEqual([]);
  // Entries carry no foreign keys (see migration 0001): every reference must still resolve.
  const dangling = await sql<{ transaction_id: string }>`
    SELECT e.transaction_id FROM ledger_entries e
    WHERE NOT EXISTS (SELECT 1 FROM ledger_transactions t WHERE t.id = e.transaction_id)
       OR NOT EXISTS (SELECT 1 FROM ledger_accounts a WHERE a.id = e.account_id)`.execute(handle.db);
  expect(dangling.rows).toEqual([]);
  // Nor a key (migration 0077): ledger_post merges a transaction's legs, one per account.
  const twoLegsOnOneAccount = await sql<{ transaction_id: string }>`
    SELECT transaction_id FROM ledger_entries GROUP BY transaction_id, account_id HAVING count(*) > 1`.execute(
    handle.db,
  );
  expect(twoLegsOnOneAccount.rows).toEqual([]);
  const negative = await sql<{ id: string }>`
    SELECT id FROM ledger_accounts WHERE is_bounded AND (posted < 0 OR posted - pending_debits < 0)`.execute(
    handle.db,
  );
  expect(negative.rows).toEqual([]);
}

describe('staged postings written as rows', () => {
  // A staged posting among accounts the ledger knows (opened or found by it) that needs no fold and no
  // refusal is written as rows, without ledger_post: the rows the function writes for it. A bounded
  // account it debits is updated where its row alone covers the change; otherwise the function posts.
  class RecordingBatch extends StatementBatch {
    readonly sent: string[] = [];
    override add(part: Parameters<StatementBatch['add']>[0]): number {
      this.sent.push(part.sql.replace(/\s+/g, ' ').trim());
      return super.add(part);
    }
  }
  /** A network's unbounded receivable and two bounded site balances, opened as system accounts. */
  async function systemSet(knowing: Ledger, asset = 'EUR') {
    const owner = randomUUID();
    const [receivable] = await tx((t) =>
      knowing.systemAccounts(t, { ownerType: 'test', ownerId: owner, asset, isBounded: false }, [
        'receivable',
      ]),
    );
    const [one, two] = await tx((t) =>
      knowing.systemAccounts(t, { ownerType: 'test', ownerId: owner, asset, isBounded: true }, [
        'one',
        'two',
      ]),
    );
    return { receivable: receivable as string, one: one as string, two: two as string };
  }
  type Staging = (batch: StatementBatch) => void;
  /** Runs the staged posting in its own transaction; answers how often ledger_post_strict ran in it. */
  async function run(stage: Staging) {
    const batch = new RecordingBatch();
    stage(batch);
    const calls = await handle.db.transaction().execute(async (t) => {
      await sql`SET LOCAL track_functions = 'pl'`.execute(t);
      // A backend's pending counts may still hold earlier transactions' calls: this one's are the difference.
      const count = async () =>
        Number(
          (
            await sql<{ calls: string }>`
              SELECT coalesce(sum(calls), 0)::text AS calls FROM pg_stat_xact_user_functions
              WHERE funcname = 'ledger_post_strict'`.execute(t)
          ).rows[0]?.calls,
        );
      const before = await count();
      await batch.run(t);
      return (await count()) - before;
    });
    return { calls, sent: batch.sent };
  }
  const transferBy =
    (by: Ledger, legs: { accountId: string; amount: bigint }[], operationId = op()): Staging =>
    (batch) => {
      by.stageTransfer(batch, { operationId, legs, metadata: { order: 7 } });
    };
  async function rowsOf(operationId: string, ids: string[]) {
    const { rows: transactions } = await sql<Record<string, unknown>>`
      SELECT id, length(request_hash) AS hash_length, kind, status, asset, hold_id, expires_at, metadata, resolved_at
      FROM ledger_transactions WHERE operation_id = ${operationId}`.execute(handle.db);
    const { rows: entries } = await sql<{ account_id: string; asset: string; amount: string }>`
      SELECT account_id, asset, amount::text FROM ledger_entries WHERE transaction_id = ${transactions[0]?.id ?? ''}`.execute(
      handle.db,
    );
    const index = (id: string) => ids.indexOf(id);
    return {
      transactions: transactions.map(({ id: _, ...t }) => t),
      entries: entries
        .map((e) => ({ ...e, account_id: index(e.account_id) }))
        .sort((p, q) => p.account_id - q.account_id),
      balances: await balancesOf(ids),
    };
  }
  /** Each account's row and what waits for it (credits, deltas), by position in `ids` */
  async function balancesOf(ids: string[]) {
    const { rows } = await sql<{
      id: string;
      row: string;
      pending_debits: string;
      credits: string;
      deltas: string;
    }>`
      SELECT a.id, a.posted::text AS row, a.pending_debits::text AS pending_debits,
        (SELECT coalesce(sum(posted + pending_credits), 0)::text FROM ledger_account_credits c WHERE c.account_id = a.id) AS credits,
        (SELECT coalesce(sum(posted), 0)::text FROM ledger_account_deltas d WHERE d.account_id = a.id) AS deltas
      FROM ledger_accounts a WHERE a.id = ANY(${ids})`.execute(handle.db);
    return ids.map((id) => {
      const { id: _, ...rest } = rows.find((r) => r.id === id) ?? { id };
      return rest;
    });
  }
  const fund = (by: Ledger, from: string, to: string, amount: bigint) =>
    run(
      transferBy(by, [
        { accountId: from, amount: -amount },
        { accountId: to, amount },
      ]),
    );

  it('writes a pure credit as the rows ledger_post writes, without the function', async () => {
    const knowing = new Ledger(() => clock.now());
    // Two like sets: the first staged by the ledger that opened it, the second by one that never opened
    // its accounts, whose posting goes through the function.
    const a = await systemSet(knowing);
    const b = await systemSet(knowing);
    const ids = (s: typeof a) => [s.receivable, s.one, s.two];
    const legs = (s: typeof a) => [
      { accountId: s.receivable, amount: -150n },
      { accountId: s.one, amount: 100n },
      { accountId: s.two, amount: 50n },
    ];
    const [opA, opB] = [op(), op()];
    const direct = await run(transferBy(knowing, legs(a), opA));
    const viaFunction = await run(transferBy(ledger, legs(b), opB));
    expect(direct.sent.some((sent) => sent.includes('ledger_post'))).toBe(false);
    expect(direct.calls).toBe(0);
    expect(viaFunction.calls).toBe(1);
    const x = await rowsOf(opA, ids(a));
    expect(x).toEqual(await rowsOf(opB, ids(b)));
    expect(x.entries).toHaveLength(3);
    expect(x.balances).toEqual([
      { row: '0', pending_debits: '0', credits: '0', deltas: '-150' },
      { row: '0', pending_debits: '0', credits: '100', deltas: '0' },
      { row: '0', pending_debits: '0', credits: '50', deltas: '0' },
    ]);
  });

  it('debits a bounded account whose row covers it, and holds on it, as the function would', async () => {
    const knowing = new Ledger(() => clock.now());
    const [a, b] = [await systemSet(knowing), await systemSet(knowing)];
    const ids = (s: typeof a) => [s.receivable, s.one, s.two];
    for (const s of [a, b]) {
      await fund(knowing, s.receivable, s.one, 500n);
      await ledger.rollUp(handle.db);
    }
    const spend = (s: typeof a) => [
      { accountId: s.one, amount: -120n },
      { accountId: s.two, amount: 120n },
    ];
    const [opA, opB] = [op(), op()];
    expect((await run(transferBy(knowing, spend(a), opA))).calls).toBe(0);
    expect((await run(transferBy(ledger, spend(b), opB))).calls).toBe(1);
    expect(await rowsOf(opA, ids(a))).toEqual(await rowsOf(opB, ids(b)));
    expect((await rowsOf(opA, ids(a))).balances[1]).toEqual({
      row: '380',
      pending_debits: '0',
      credits: '0',
      deltas: '0',
    });

    const expiresAt = new Date(clock.now().getTime() + 60_000);
    const hold =
      (by: Ledger, s: typeof a, operationId: string): Staging =>
      (batch) => {
        by.stageHold(batch, {
          operationId,
          debitAccountId: s.one,
          creditAccountId: s.receivable,
          amount: 80n,
          expiresAt,
        });
      };
    const [holdA, holdB] = [op(), op()];
    expect((await run(hold(knowing, a, holdA))).calls).toBe(0);
    expect((await run(hold(ledger, b, holdB))).calls).toBe(1);
    const held = await rowsOf(holdA, ids(a));
    expect(held).toEqual(await rowsOf(holdB, ids(b)));
    expect(held.transactions[0]).toMatchObject({ kind: 'hold', status: 'pending', expires_at: expiresAt });
    expect(held.balances[1]).toEqual({ row: '380', pending_debits: '80', credits: '0', deltas: '0' });
  });

  it('leaves to the function a debit the row alone cannot cover: it folds the waiting credits, or refuses', async () => {
    const knowing = new Ledger(() => clock.now());
    const s = await systemSet(knowing);
    await fund(knowing, s.receivable, s.one, 100n); // waits in ledger_account_credits, not folded
    const spend = (amount: bigint, operationId = op()) =>
      transferBy(
        knowing,
        [
          { accountId: s.one, amount: -amount },
          { accountId: s.two, amount },
        ],
        operationId,
      );
    // The fallback is given the transaction's and the entries' parameters (shared, sent once): it writes
    // what the function writes when it posts alone.
    const alone = await systemSet(knowing);
    await fund(knowing, alone.receivable, alone.one, 100n);
    const [fallback, byFunction] = [op(), op()];
    expect((await run(spend(60n, fallback))).calls).toBe(1);
    expect(
      (
        await run(
          transferBy(
            ledger,
            [
              { accountId: alone.one, amount: -60n },
              { accountId: alone.two, amount: 60n },
            ],
            byFunction,
          ),
        )
      ).calls,
    ).toBe(1);
    const written = await rowsOf(fallback, [s.receivable, s.one, s.two]);
    expect(written).toEqual(await rowsOf(byFunction, [alone.receivable, alone.one, alone.two]));
    expect(written.transactions).toMatchObject([
      { hash_length: 64, kind: 'transfer', metadata: { order: 7 } },
    ]);
    expect(await balancesOf([s.one, s.two])).toEqual([
      { row: '40', pending_debits: '0', credits: '0', deltas: '0' },
      { row: '0', pending_debits: '0', credits: '60', deltas: '0' },
    ]);
    const short = await run(spend(41n)).catch((err: unknown) => err);
    expect(ledgerRefusal(short)?.details).toMatchObject({ reason: 'insufficient_funds', accountId: s.one });
    // An account of another asset than the rest, unknown to this ledger: the function refuses the mix.
    const usd = await systemSet(new Ledger(() => clock.now()), 'USD');
    await fund(ledger, usd.receivable, usd.one, 10n);
    await ledger.rollUp(handle.db);
    const mixed = await run(
      transferBy(knowing, [
        { accountId: usd.one, amount: -10n },
        { accountId: s.two, amount: 10n },
      ]),
    ).catch((err: unknown) => err);
    expect(ledgerRefusal(mixed)?.message).toBe('all accounts of a ledger transaction hold one asset');
    // (the rollup above folded the credit waiting for `two`)
    expect(await balancesOf([s.one, s.two, usd.one])).toEqual([
      { row: '40', pending_debits: '0', credits: '0', deltas: '0' },
      { row: '60', pending_debits: '0', credits: '0', deltas: '0' },
      { row: '10', pending_debits: '0', credits: '0', deltas: '0' },
    ]);
  });

  it('of many staged spends racing for one balance, exactly the affordable ones succeed', async () => {
    const knowing = new Ledger(() => clock.now());
    const s = await systemSet(knowing);
    await fund(knowing, s.receivable, s.one, 100n);
    await ledger.rollUp(handle.db);
    await fund(knowing, s.receivable, s.one, 50n); // and 50 more waiting, folded by whichever spend needs it
    const outcomes = await Promise.allSettled(
      Array.from({ length: 25 }, () =>
        run(
          transferBy(knowing, [
            { accountId: s.one, amount: -10n },
            { accountId: s.two, amount: 10n },
          ]),
        ),
      ),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(15);
    for (const o of outcomes) {
      if (o.status === 'rejected')
        expect(ledgerRefusal(o.reason)?.details).toMatchObject({ reason: 'insufficient_funds' });
    }
    await ledger.rollUp(handle.db);
    expect((await ledger.getAccount(handle.db, s.one))?.posted).toBe(0n);
    expect((await ledger.getAccount(handle.db, s.two))?.posted).toBe(150n);
  });

  it('refuses a reused operation id and writes nothing of the statement', async () => {
    const knowing = new Ledger(() => clock.now());
    const s = await systemSet(knowing);
    const operationId = op();
    const legs = [
      { accountId: s.receivable, amount: -5n },
      { accountId: s.one, amount: 5n },
    ];
    await run(transferBy(knowing, legs, operationId));
    const again = await run(transferBy(knowing, legs, operationId)).catch((err: unknown) => err);
    expect((again as { constraint?: string }).constraint).toBe('ledger_transactions_operation_id_key');
    expect(await balancesOf([s.receivable, s.one])).toEqual([
      { row: '0', pending_debits: '0', credits: '0', deltas: '-5' },
      { row: '0', pending_debits: '0', credits: '5', deltas: '0' },
    ]);
  });
});

describe('plans', () => {
  // Migrations 0046 and 0047: whatever the table's statistics, a posting finds its accounts by their key.
  // Planned on statistics that had not seen them (a table not yet analyzed, or analyzed nearly empty, as
  // here), the reads were scans of every account, per transfer.
  it('reads and locks the accounts of a posting, immediate or staged, by their key, never by a scan', async () => {
    // A thousand accounts the statistics have not seen, as a bench opens seconds before it measures.
    await sql`INSERT INTO ledger_accounts (id, owner_type, owner_id, asset, purpose, is_bounded, created_at)
      SELECT 'la_plans_' || g || '_' || ${randomUUID()}, 'test', ${randomUUID()}, 'EUR', 'p' || g, true, now()
      FROM generate_series(1, 1000) g`.execute(handle.db);
    const { world, alice, bob } = await accounts();
    await transfer(world, alice, 100n);
    // One connection throughout: a function's plans are cached per connection, and one that locked and
    // folded accounts outside a posting first (lockBounded, a sweep) keeps the plans it made then.
    const scans = await handle.db.connection().execute(async (c) => {
      for (let i = 0; i < 8; i++) await c.transaction().execute((t) => lockBounded(t, [alice.id, bob.id]));
      return c.transaction().execute(async (t) => {
        // A backend's counts reach the statistics views only when it idles (at most once a second), so its
        // pending count may still hold scans of earlier transactions: what this one did is the difference.
        const seqScans = async () =>
          Number(
            (
              await sql<{ seq_scan: string }>`
                SELECT seq_scan::text FROM pg_stat_xact_user_tables WHERE relname = 'ledger_accounts'`.execute(
                t,
              )
            ).rows[0]?.seq_scan ?? 0,
          );
        const before = await seqScans();
        await ledger.transfer(t, {
          operationId: op(),
          legs: [
            { accountId: alice.id, amount: -40n },
            { accountId: bob.id, amount: 40n },
          ],
        });
        const batch = new StatementBatch();
        ledger.stageTransfer(batch, {
          operationId: op(),
          legs: [
            { accountId: bob.id, amount: -10n },
            { accountId: world.id, amount: 10n },
          ],
        });
        await batch.run(t);
        await lockBounded(t, [alice.id, bob.id]);
        return (await seqScans()) - before;
      });
    });
    expect(scans).toBe(0);
    expect((await balance(bob)).posted).toBe(30n);
  });
});
