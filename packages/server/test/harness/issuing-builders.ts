// Builders for issuing tests: they go through the real routes and services (never raw inserts), as
// Builders read as sentences: aCustomer({ kyc: 'approved' }), fundAccount(…), aCardholder(…).
import type { Harness } from './harness.ts';

export type Auth = Record<string, string>;

export interface TestCustomer {
  customerId: string;
  auth: Auth;
  /** A fresh access token (tokens last 15 minutes of sandbox time) */
  relogin(): Promise<Auth>;
}

/**
 * A customer registered and logged in by the partner's backend; KYC approved unless asked otherwise, with
 * the residence step given first when a country of residence is.
 */
export async function aCustomer(
  h: Harness,
  partnerApiKey: string,
  options: { kyc?: 'approved' | 'none'; residence?: string } = {},
): Promise<TestCustomer> {
  const partner = { 'x-partner-api-key': partnerApiKey };
  const reg = await h.request<{ customerId: string }>('POST', '/issuing/v1/auth/register/partner', {
    headers: partner,
    json: { userId: `user-${Math.random().toString(36).slice(2)}` },
  });
  const { customerId } = reg.body;
  const relogin = async () => {
    const login = await h.request<{ accessToken: string }>('POST', '/issuing/v1/auth/login/partner', {
      headers: partner,
      json: { customerId },
    });
    return { authorization: `Bearer ${login.body.accessToken}` };
  };
  if (options.residence) {
    const residence = await h.request('POST', '/issuing/v1/kyc/residence', {
      headers: await relogin(),
      json: { ...(KYC_STEPS[2]?.[1] as object), country: options.residence },
    });
    if (residence.status !== 200) throw new Error(`residence: ${residence.status} ${residence.text}`);
  }
  if ((options.kyc ?? 'approved') === 'approved') {
    await h.request('POST', `/sandbox/issuing/kyc/${customerId}/decision`, {
      headers: { authorization: `Bearer ${h.adminToken}` },
      json: { status: 'approved' },
    });
  }
  return { customerId, auth: await relogin(), relogin };
}

export async function anAccount(h: Harness, auth: Auth, currency = 'EUR'): Promise<string> {
  return (
    await h.request<{ accountId: string }>('POST', '/issuing/v1/accounts', {
      headers: auth,
      json: { currency },
    })
  ).body.accountId;
}

/** Credits an issuing account through the ledger, as a completed topup does. */
export async function fundAccount(h: Harness, accountId: string, currency: string, minor: bigint) {
  const { ledger, transact, db } = h.services;
  const row = await db
    .selectFrom('issuing_accounts')
    .select('ledger_account_id')
    .where('id', '=', accountId)
    .executeTakeFirstOrThrow();
  const source = await ledger.openAccount(db, {
    ownerType: 'test',
    ownerId: 'funding',
    asset: currency,
    purpose: 'source',
    isBounded: false,
  });
  await transact((tx) =>
    ledger.transfer(tx, {
      operationId: `fund-${accountId}-${minor}-${Math.random()}`,
      legs: [
        { accountId: source.id, amount: -minor },
        { accountId: row.ledger_account_id, amount: minor },
      ],
    }),
  );
  return { sourceLedgerAccountId: source.id, ledgerAccountId: row.ledger_account_id };
}

/** An approved customer with a funded EUR account and an active virtual card. */
export async function aCardholder(
  h: Harness,
  partnerApiKey: string,
  funds = 10_000n,
  options: { residence?: string } = {},
) {
  const customer = await aCustomer(h, partnerApiKey, options);
  const accountId = await anAccount(h, customer.auth);
  if (funds > 0n) await fundAccount(h, accountId, 'EUR', funds);
  const card = await h.request<{ cardId: string }>('POST', '/issuing/v1/cards', {
    headers: customer.auth,
    json: { isVirtual: true, currency: 'EUR' },
  });
  const balance = async () => {
    const res = await h.request<{
      data: { balance: string; availableBalance: string; pendingAmount: string }[];
    }>('GET', '/issuing/v1/accounts', {
      headers: await customer.relogin(),
    });
    const account = res.body.data[0];
    if (!account) throw new Error('the cardholder has no account');
    return account;
  };
  return { ...customer, accountId, cardId: card.body.cardId, balance };
}

/** A valid body for every KYC step, in order (the document checks come after them). */
export const KYC_STEPS: [string, unknown][] = [
  ['agreement', { termsAccepted: true, privacyPolicyAccepted: true, version: '2026-01' }],
  [
    'personal-info',
    {
      firstName: 'Ada',
      lastName: 'Lovelace',
      dateOfBirth: '1990-12-10',
      nationality: 'gb',
      phone: '+447700900123',
    },
  ],
  ['residence', { country: 'RO', city: 'Bucharest', postalCode: '010101', addressLine1: 'Str. Exemplu 1' }],
  ['gender', { gender: 'female' }],
  ['birthplace', { country: 'GB', city: 'London' }],
  [
    'wealth-and-income',
    {
      employmentStatus: 'employed',
      occupation: 'Engineer',
      annualIncome: '50k_100k',
      sourceOfFunds: ['salary'],
      expectedMonthlySpend: '1k_5k',
    },
  ],
  ['pep', { isPoliticallyExposed: false }],
];

/** A fiat topup of the customer's account made and completed (the sandbox's bank transfer arriving); its id */
export async function aCompletedTopup(
  h: Harness,
  customer: Pick<TestCustomer, 'relogin'>,
  accountId: string,
  amount: string,
): Promise<string> {
  const made = await h.request<{ topupId: string }>('POST', '/issuing/v1/topups/fiat', {
    headers: { ...(await customer.relogin()), accept: 'application/json' },
    json: { accountId, amount },
  });
  if (made.status !== 201) throw new Error(`topup: ${made.status} ${made.text}`);
  const done = await h.request<{ status: string }>(
    'POST',
    `/sandbox/issuing/topups/${made.body.topupId}/complete`,
    {
      headers: { authorization: `Bearer ${h.adminToken}` },
    },
  );
  if (done.body.status !== 'completed') throw new Error(`topup not completed: ${done.text}`);
  return made.body.topupId;
}
