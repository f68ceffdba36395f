// Card issuing scenarios: card authorizations (no 3D Secure) through the real HTTP stack, as the card
// network's requests arrive at POST /sandbox/issuing/authorizations: checks, a ledger hold, events.
// The load comes from a worker thread, so the client does not share the server's event loop.
import { startBenchApp } from './bench-app.ts';
import { runHttpLoad } from './http-load.ts';
import type { Measurement } from './measure.ts';

const CARDHOLDERS = 100;

export async function issuingScenarios(
  databaseUrl: string,
  settings: { concurrency: number; seconds: number; warmupSeconds: number },
) {
  const { tessera, base, admin, call } = await startBenchApp(databaseUrl);
  const partner = await call<{ apiKey: string }>('POST', '/admin/partners', admin, { name: 'Bench partner' });
  const cards: string[] = [];
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
    const { ledger, transact, db } = tessera.services;
    const row = await db
      .selectFrom('issuing_accounts')
      .select('ledger_account_id')
      .where('id', '=', account.accountId)
      .executeTakeFirstOrThrow();
    const source = await ledger.openAccount(db, {
      ownerType: 'bench',
      ownerId: 'funding',
      asset: 'EUR',
      purpose: 'source',
      isBounded: false,
    });
    await transact((tx) =>
      ledger.transfer(tx, {
        operationId: `bench-fund-${account.accountId}`,
        legs: [
          { accountId: source.id, amount: -100_000_000_00n },
          { accountId: row.ledger_account_id, amount: 100_000_000_00n },
        ],
      }),
    );
    cards.push(
      (
        await call<{ cardId: string }>('POST', '/issuing/v1/cards', customer, {
          isVirtual: true,
          currency: 'EUR',
        })
      ).cardId,
    );
  }
  const bodies = cards.map((cardId) =>
    JSON.stringify({ cardId, amount: '1.00', currency: 'EUR', merchant: 'Bench Store' }),
  );
  const job = {
    url: `${base}/sandbox/issuing/authorizations`,
    headers: { ...admin, 'content-type': 'application/json' },
    bodies,
    // an answer counts only when the authorization was approved
    expect: '"authorized"',
  };

  let saturated: Measurement | undefined;
  return [
    async () => {
      saturated = await runHttpLoad('card authorization (no 3DS), HTTP, saturated', {
        ...job,
        mode: 'closed',
        concurrency: settings.concurrency,
        ratePerSecond: 0,
        seconds: settings.seconds,
        warmupSeconds: settings.warmupSeconds,
      });
      return saturated;
    },
    async () => {
      const rate = Math.max(1, Math.round((saturated?.opsPerSec ?? 100) / 2));
      const result = await runHttpLoad(`card authorization at half that rate (${rate}/s)`, {
        ...job,
        mode: 'open',
        concurrency: 0,
        ratePerSecond: rate,
        seconds: settings.seconds,
        warmupSeconds: 0,
      });
      await tessera.close();
      return result;
    },
  ];
}
