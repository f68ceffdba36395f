// Card issuing: card authorizations (no 3D Secure) as the card network's requests arrive at
// POST /sandbox/issuing/authorizations: the card's checks, a ledger hold, the transactionCreated event.
import type { Db } from '../packages/server/src/platform/db/database.ts';
import { Ledger } from '../packages/server/src/platform/ledger/ledger.ts';
import type { FloorFixture } from './floor-server.ts';
import type { PathSetup } from './payments.ts';
import type { TesseraServer } from './servers.ts';

const CARDHOLDERS = 100;
const SETTLEMENT_SHARDS = 16;

export async function setUpIssuing(
  tessera: TesseraServer,
  db: Db,
): Promise<PathSetup<FloorFixture['issuing']>> {
  const { call, admin } = tessera;
  const partner = await call<{ id: string; apiKey: string }>('POST', '/admin/partners', admin, {
    name: 'Bench partner',
  });
  const ledger = new Ledger(() => new Date());
  const source = await ledger.openAccount(db, {
    ownerType: 'bench',
    ownerId: 'funding',
    asset: 'EUR',
    purpose: 'source',
    isBounded: false,
  });
  const cards: FloorFixture['issuing']['cards'] = {};
  for (let i = 0; i < CARDHOLDERS; i++) {
    const { customerId } = await call<{ customerId: string }>(
      'POST',
      '/issuing/v1/auth/register/partner',
      { 'x-partner-api-key': partner.apiKey },
      { userId: `bench-${i}` },
    );
    const { accessToken } = await call<{ accessToken: string }>(
      'POST',
      '/issuing/v1/auth/login/partner',
      { 'x-partner-api-key': partner.apiKey },
      { customerId },
    );
    await call('POST', `/sandbox/issuing/kyc/${customerId}/decision`, admin, { status: 'approved' });
    const customer = { authorization: `Bearer ${accessToken}` };
    const account = await call<{ accountId: string }>('POST', '/issuing/v1/accounts', customer, {
      currency: 'EUR',
    });
    const row = await db
      .selectFrom('issuing_accounts')
      .select('ledger_account_id')
      .where('id', '=', account.accountId)
      .executeTakeFirstOrThrow();
    await db.transaction().execute((tx) =>
      ledger.transfer(tx, {
        operationId: `bench-fund-${account.accountId}`,
        legs: [
          { accountId: source.id, amount: -100_000_000_00n },
          { accountId: row.ledger_account_id, amount: 100_000_000_00n },
        ],
      }),
    );
    const { cardId } = await call<{ cardId: string }>('POST', '/issuing/v1/cards', customer, {
      isVirtual: true,
      currency: 'EUR',
    });
    cards[cardId] = {
      customerId,
      partnerId: partner.id,
      accountId: account.accountId,
      ledgerAccountId: row.ledger_account_id,
      currency: 'EUR',
    };
  }
  const settlementAccounts: string[] = [];
  for (let shard = 0; shard < SETTLEMENT_SHARDS; shard++) {
    const account = await ledger.openAccount(db, {
      ownerType: 'issuing_network',
      ownerId: 'card-network',
      asset: 'EUR',
      purpose: `settlement:${shard}`,
      isBounded: false,
    });
    settlementAccounts.push(account.id);
  }
  const bodies = Object.keys(cards).map((cardId) =>
    JSON.stringify({ cardId, amount: '1.00', currency: 'EUR', merchant: 'Bench Store' }),
  );
  const json = { 'content-type': 'application/json' };
  // an answer counts only when the authorization was approved
  const expect = '"authorized"';
  return {
    target: {
      base: tessera.base,
      path: '/sandbox/issuing/authorizations',
      headers: { ...tessera.admin, ...json },
      bodies,
      expect,
    },
    floor: { path: '/floor/issuing/authorizations', headers: json, bodies, expect },
    fixture: { cards, settlementAccounts },
  };
}
