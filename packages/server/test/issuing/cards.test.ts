// /cards: issue (virtual and physical), the transition table with 409s naming the status, reissue by
// reason, audited and rate-limited secrets, cardStatusChanged per change, and tenant isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLuhnValid } from '../../src/platform/cards/card-number.ts';
import { Harness } from '../harness/harness.ts';
import { aCustomer, anAccount } from '../harness/issuing-builders.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

let h: Harness;
let receiver: WebhookReceiver;
let partnerKey: string;

beforeAll(async () => {
  h = await Harness.start();
  receiver = await WebhookReceiver.start();
  partnerKey = (
    await h.admin<{ apiKey: string }>('POST', '/partners', {
      json: { name: 'Cards partner', webhookUrl: receiver.url('/cards') },
    })
  ).body.apiKey;
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

type Card = {
  cardId: string;
  status: string;
  maskedPan: string;
  last4: string;
  expiryMonth: number;
  expiryYear: number;
  isVirtual: boolean;
  replacesCardId: string | null;
};
type Secrets = { pan: string; cvv: string; expiryMonth: number; expiryYear: number };
type IssuingError = { error: string; field?: string; detail: string; details?: { status?: string } };

async function customer(options: { approved?: boolean; account?: boolean } = {}) {
  const created = await aCustomer(h, partnerKey, { kyc: (options.approved ?? true) ? 'approved' : 'none' });
  if (options.account ?? true) await anAccount(h, created.auth);
  return created;
}

const call = <T>(auth: Record<string, string>, method: string, path: string, json?: unknown) =>
  h.request<T>(method, `/issuing/v1/cards${path}`, {
    headers: auth,
    ...(json !== undefined ? { json } : {}),
  });
const physical = {
  isVirtual: false,
  currency: 'EUR',
  label: 'Plastic',
  pin: '1357',
  deliveryAddress: {
    name: 'Ada Lovelace',
    line1: 'Str. Exemplu 1',
    city: 'Bucharest',
    postalCode: '010101',
    country: 'RO',
  },
};

describe('issuing cards', () => {
  it('issues a virtual card: active, Luhn-valid in the BIN, number masked everywhere but /secrets', async () => {
    const { auth } = await customer();
    const issued = await call<Card>(auth, 'POST', '', {
      isVirtual: true,
      currency: 'eur',
      label: 'Main card',
    });
    expect(issued.status).toBe(201);
    expect(issued.body).toMatchObject({ status: 'active', isVirtual: true, label: 'Main card' });
    expect(issued.body.maskedPan).toMatch(/^489537\*{6}\d{4}$/);
    const secrets = await call<Secrets>(auth, 'GET', `/${issued.body.cardId}/secrets`);
    expect(secrets.status).toBe(200);
    expect(secrets.headers.get('cache-control')).toBe('no-store');
    expect(secrets.body.pan).toMatch(/^489537\d{10}$/);
    expect(isLuhnValid(secrets.body.pan)).toBe(true);
    expect(secrets.body.pan.endsWith(issued.body.last4)).toBe(true);
    expect(secrets.body.cvv).toMatch(/^\d{3}$/);
    expect(secrets.body.expiryYear).toBe(
      new Date(Date.parse(issued.headers.get('date') ?? '')).getUTCFullYear() + 4,
    );
    const row = await h.services.db
      .selectFrom('issuing_cards')
      .selectAll()
      .where('id', '=', issued.body.cardId)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(secrets.body.pan);
    const listed = await call<{ data: Card[] }>(auth, 'GET', '');
    expect(JSON.stringify(listed.body)).not.toContain(secrets.body.pan);
    const audit = await h.services.db
      .selectFrom('issuing_card_secret_reveals')
      .selectAll()
      .where('card_id', '=', issued.body.cardId)
      .execute();
    expect(audit).toHaveLength(1);
  });

  it('needs approved KYC, an open account in the currency, and a valid body', async () => {
    const unapproved = await customer({ approved: false, account: false });
    expect(
      (await call<IssuingError>(unapproved.auth, 'POST', '', { isVirtual: true, currency: 'EUR' })).status,
    ).toBe(409);
    const noAccount = await customer({ account: false });
    const refused = await call<IssuingError>(noAccount.auth, 'POST', '', {
      isVirtual: true,
      currency: 'EUR',
    });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/open a EUR account/);
    const { auth } = await customer();
    const cases: [unknown, string][] = [
      [{ currency: 'EUR' }, 'isVirtual'],
      [{ isVirtual: true }, 'currency'],
      [{ isVirtual: true, currency: 'EUR', subscriptionCardId: 'basic' }, 'subscriptionCardId'],
      [
        { isVirtual: true, currency: 'EUR', subscriptionCardId: '11111111-1111-4111-8111-111111111111' },
        'subscriptionCardId',
      ],
      [{ ...physical, deliveryAddress: undefined }, 'deliveryAddress'],
      [{ ...physical, pin: undefined }, 'pin'],
      [{ ...physical, pin: '1234' }, 'pin'],
      [{ ...physical, pin: '12a4' }, 'pin'],
      [
        { ...physical, deliveryAddress: { ...physical.deliveryAddress, country: 'ZZ' } },
        'deliveryAddress.country',
      ],
    ];
    for (const [json, field] of cases) {
      const res = await call<IssuingError>(auth, 'POST', '', json);
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(res.body.field).toBe(field);
    }
  });

  it('follows the transition table and names the status when an action is not allowed', async () => {
    const { auth } = await customer();
    const card = (await call<Card>(auth, 'POST', '', physical)).body;
    expect(card.status).toBe('pending');
    const early = await call<IssuingError>(auth, 'POST', `/${card.cardId}/activate`);
    expect(early.status).toBe(409);
    expect(early.body.details?.status).toBe('pending');
    expect(early.body.detail).toBe('cannot activate a card that is pending');
    const shipped = await h.request<{ status: string }>(
      'POST',
      `/sandbox/issuing/cards/${card.cardId}/ship`,
      { headers: { authorization: `Bearer ${h.adminToken}` } },
    );
    expect(shipped.body.status).toBe('readyToBeActivated');
    expect((await call<Card>(auth, 'POST', `/${card.cardId}/activate`)).body.status).toBe('active');
    expect((await call<Card>(auth, 'POST', `/${card.cardId}/freeze`)).body.status).toBe('frozen');
    expect((await call<IssuingError>(auth, 'POST', `/${card.cardId}/freeze`)).body.details?.status).toBe(
      'frozen',
    );
    expect((await call<Card>(auth, 'POST', `/${card.cardId}/unfreeze`)).body.status).toBe('active');
    expect((await call<IssuingError>(auth, 'POST', `/${card.cardId}/unfreeze`)).status).toBe(409);

    const statuses = ['pending', 'readyToBeActivated', 'active', 'frozen', 'active'];
    const events = await receiver.waitFor(statuses.length, (r) => r.body.includes(card.cardId));
    expect(events.map((r) => JSON.parse(r.body).data.newStatus).sort()).toEqual([...statuses].sort());
    expect(events.every((r) => JSON.parse(r.body).eventType === 'cardStatusChanged')).toBe(true);
  });

  it('reissues lost cards with a new number and damaged ones with the same number, closing the old', async () => {
    const { auth } = await customer();
    const lost = (await call<Card>(auth, 'POST', '', { isVirtual: true, currency: 'EUR' })).body;
    const lostSecrets = (await call<Secrets>(auth, 'GET', `/${lost.cardId}/secrets`)).body;
    const replacement = await call<Card>(auth, 'POST', `/${lost.cardId}/reissue/lost`);
    expect(replacement.status).toBe(201);
    expect(replacement.body).toMatchObject({ status: 'active', replacesCardId: lost.cardId });
    const newSecrets = (await call<Secrets>(auth, 'GET', `/${replacement.body.cardId}/secrets`)).body;
    expect(newSecrets.pan).not.toBe(lostSecrets.pan);
    expect((await call<Card>(auth, 'GET', `/${lost.cardId}`)).body.status).toBe('closed');
    const closedAgain = await call<IssuingError>(auth, 'POST', `/${lost.cardId}/reissue/stolen`);
    expect(closedAgain.status).toBe(409);
    expect(closedAgain.body.details?.status).toBe('closed');
    expect((await call(auth, 'GET', `/${lost.cardId}/secrets`)).status).toBe(409);

    const damaged = await call<Card>(auth, 'POST', `/${replacement.body.cardId}/reissue/damaged`);
    const damagedSecrets = (await call<Secrets>(auth, 'GET', `/${damaged.body.cardId}/secrets`)).body;
    expect(damagedSecrets.pan).toBe(newSecrets.pan);
    expect(damaged.body.cardId).not.toBe(replacement.body.cardId);
    expect((await call(auth, 'POST', `/${damaged.body.cardId}/reissue/misplaced`)).status).toBe(400);

    const plastic = (await call<Card>(auth, 'POST', '', physical)).body;
    const newPlastic = await call<Card>(auth, 'POST', `/${plastic.cardId}/reissue/expired`, { pin: '2580' });
    expect(newPlastic.body).toMatchObject({ status: 'pending', isVirtual: false });
  });

  it('limits secret reveals to 5 an hour per card', async () => {
    const { auth, relogin } = await customer();
    const card = (await call<Card>(auth, 'POST', '', { isVirtual: true, currency: 'EUR' })).body;
    for (let i = 0; i < 5; i++) expect((await call(auth, 'GET', `/${card.cardId}/secrets`)).status).toBe(200);
    const limited = await call(auth, 'GET', `/${card.cardId}/secrets`);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3600');
    await h.advanceClock(3601);
    // An hour later the access token has expired too; a new login reveals again.
    expect((await call(auth, 'GET', `/${card.cardId}/secrets`)).status).toBe(401);
    expect((await call(await relogin(), 'GET', `/${card.cardId}/secrets`)).status).toBe(200);
  });

  it('keeps cards to their customer: every foreign id is 404', async () => {
    const alice = await customer();
    const bob = await customer();
    const card = (await call<Card>(alice.auth, 'POST', '', { isVirtual: true, currency: 'EUR' })).body;
    for (const [method, path] of [
      ['GET', `/${card.cardId}`],
      ['GET', `/${card.cardId}/secrets`],
      ['POST', `/${card.cardId}/freeze`],
      ['POST', `/${card.cardId}/unfreeze`],
      ['POST', `/${card.cardId}/activate`],
      ['POST', `/${card.cardId}/reissue/lost`],
    ] as const) {
      expect((await call(bob.auth, method, path)).status, `${method} ${path}`).toBe(404);
      expect((await call({}, method, path)).status, `${method} ${path}`).toBe(401);
    }
    expect((await call<{ data: Card[] }>(bob.auth, 'GET', '')).body.data).toEqual([]);
    expect((await call(alice.auth, 'GET', '/not-a-card')).status).toBe(404);
    expect(
      (
        await h.request('POST', '/sandbox/issuing/cards/not-a-card/ship', {
          headers: { authorization: `Bearer ${h.adminToken}` },
        })
      ).status,
    ).toBe(404);
  });

  it('provisions active cards to Apple Pay and Google Pay with data only the wallet can open', async () => {
    const { auth } = await customer();
    const card = (await call<Card>(auth, 'POST', '', { isVirtual: true, currency: 'EUR' })).body;
    const pan = (await call<Secrets>(auth, 'GET', `/${card.cardId}/secrets`)).body.pan;
    const apple = await call<{
      activationData: string;
      encryptedPassData: string;
      ephemeralPublicKey: string;
    }>(auth, 'POST', `/${card.cardId}/provisioning/apple-pay`, {
      certificates: [
        Buffer.from('leaf certificate').toString('base64'),
        Buffer.from('sub-CA certificate').toString('base64'),
      ],
      nonce: 'a1b2c3d4',
      nonceSignature: Buffer.from('signature').toString('base64'),
    });
    expect(apple.status).toBe(200);
    expect(apple.body.encryptedPassData).not.toContain(pan);
    const pass = JSON.parse(
      h.services.railSandbox.tokenization.openSealed(
        apple.body.encryptedPassData,
        apple.body.ephemeralPublicKey,
      ),
    );
    expect(pass).toMatchObject({ primaryAccountNumber: pan, nonce: 'a1b2c3d4' });
    expect(Buffer.from(apple.body.activationData, 'base64')).toHaveLength(32);

    const google = await call<{
      opaquePaymentCard: string;
      network: string;
      tokenServiceProvider: string;
      lastDigits: string;
    }>(auth, 'GET', `/${card.cardId}/provisioning/google-pay`);
    expect(google.body).toMatchObject({
      network: 'VISA',
      tokenServiceProvider: 'TOKEN_PROVIDER_VISA',
      lastDigits: card.last4,
    });
    const opaque = JSON.parse(Buffer.from(google.body.opaquePaymentCard, 'base64').toString());
    expect(
      JSON.parse(h.services.railSandbox.tokenization.openSealed(opaque.data, opaque.ephemeralPublicKey)).fpan,
    ).toBe(pan);

    for (const [json, field] of [
      [{ nonce: 'a1b2c3d4', nonceSignature: 'c2ln' }, 'certificates'],
      [{ certificates: [], nonce: 'a1b2c3d4', nonceSignature: 'c2ln' }, 'certificates'],
      [{ certificates: ['bm90 YmFzZTY0'], nonce: 'a1b2c3d4', nonceSignature: 'c2ln' }, 'certificates.0'],
      [{ certificates: ['Y2VydA=='], nonce: '', nonceSignature: 'c2ln' }, 'nonce'],
    ] as const) {
      const res = await call<IssuingError>(auth, 'POST', `/${card.cardId}/provisioning/apple-pay`, json);
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(res.body.field).toBe(field);
    }
    await call(auth, 'POST', `/${card.cardId}/freeze`);
    const frozen = await call<IssuingError>(auth, 'GET', `/${card.cardId}/provisioning/google-pay`);
    expect(frozen.status).toBe(409);
    expect(frozen.body.details?.status).toBe('frozen');
    const stranger = await customer();
    expect((await call(stranger.auth, 'GET', `/${card.cardId}/provisioning/google-pay`)).status).toBe(404);
  });
});
