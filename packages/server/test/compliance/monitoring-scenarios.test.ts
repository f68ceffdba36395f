// Transaction monitoring's scenarios (docs/compliance.md, Monitoring), each played through the public
// routes on the sandbox clock with small parameters: many cards in one name, a topup spent as soon as it
// lands (rapid movement), a merchant's refunds over its captures, a merchant's day far over its own
// baseline (unusual volume), an owner of a high-risk country. Each pattern raises exactly one alert in its
// subject's case, which holds nothing until a person confirms it; an ordinary pattern raises none.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import { aCompletedTopup, aCustomer, anAccount } from '../harness/issuing-builders.ts';
import { aMerchant, anOrder, aCustomer as aPayer, payments } from '../harness/payments-builders.ts';

interface AlertView {
  kind: string;
  caseId: string;
  evidence: { summary: string };
}

const DAY = 86_400;

let h: Harness;
let partner: { apiKey: string; id: string };

beforeAll(async () => {
  h = await Harness.start({
    env: {
      TESSERA_AML_MANY_CARDS: '3:30',
      TESSERA_AML_RAPID_MOVEMENT: '80:6',
      TESSERA_AML_REFUNDS_OVER_CAPTURES: '3:2',
      TESSERA_AML_UNUSUAL_VOLUME: '5:100',
    },
  });
  partner = (await h.admin<typeof partner>('POST', '/partners', { json: { name: 'Monitored partner' } }))
    .body;
});
afterAll(() => h.close());

const alertsOf = async (tenant: string, scenario: string) =>
  (
    await h.admin<{ data: AlertView[] }>('GET', `/compliance/alerts?tenant=${tenant}&limit=100`)
  ).body.data.filter((a) => a.kind === `scenario:${scenario}`);
const holdsOf = async (caseId: string) =>
  (await h.admin<{ holds: unknown[] }>('GET', `/compliance/cases/${caseId}`)).body.holds;

describe('many cards in one name', () => {
  it('raises one alert as the third new card is issued within the window, none for reissues', async () => {
    const customer = await aCustomer(h, partner.apiKey);
    await anAccount(h, customer.auth);
    const issue = async () => {
      const card = await h.request<{ cardId: string }>('POST', '/issuing/v1/cards', {
        headers: await customer.relogin(),
        json: { isVirtual: true, currency: 'EUR' },
      });
      expect(card.status, card.text).toBe(201);
      return card.body.cardId;
    };
    await issue();
    await issue();
    expect(await alertsOf(`partner:${partner.id}`, 'many_cards')).toEqual([]);
    await issue();
    await issue();
    const alerts = (await alertsOf(`partner:${partner.id}`, 'many_cards')).filter((a) =>
      a.evidence.summary.startsWith('3 cards'),
    );
    expect(alerts).toHaveLength(1);
    expect(await alertsOf(`partner:${partner.id}`, 'many_cards')).toHaveLength(1);
    expect(await holdsOf(alerts[0]?.caseId as string)).toEqual([]);
  });
});

describe('rapid movement', () => {
  it('raises one alert for a topup spent within the window, none for one left alone', async () => {
    const customer = await aCustomer(h, partner.apiKey);
    const accountId = await anAccount(h, customer.auth);
    const card = await h.request<{ cardId: string }>('POST', '/issuing/v1/cards', {
      headers: await customer.relogin(),
      json: { isVirtual: true, currency: 'EUR' },
    });
    const topUp = (amount: string) => aCompletedTopup(h, customer, accountId, amount);
    const spend = async (amount: string) => {
      const paid = await h.request<{ status: string }>('POST', '/sandbox/issuing/authorizations', {
        headers: { authorization: `Bearer ${h.adminToken}` },
        json: { cardId: card.body.cardId, amount, currency: 'EUR', merchant: 'Electronics Outlet' },
      });
      expect(paid.body.status).toBe('authorized');
    };
    const spentFrom = await topUp('500.00');
    await h.advanceClock(3600);
    await spend('250.00');
    await spend('170.00');
    // The window (6 h) is open: nothing judged yet
    expect(await alertsOf(`partner:${partner.id}`, 'rapid_movement')).toEqual([]);
    await h.advanceClock(6 * 3600);
    await topUp('500.00');
    await h.advanceClock(8 * 3600);
    const alerts = await alertsOf(`partner:${partner.id}`, 'rapid_movement');
    expect(alerts).toHaveLength(1);
    expect(alerts[0]?.evidence).toMatchObject({
      summary: '420.00 of a 500.00 EUR topup spent by card within 6 h',
      topup: { id: spentFrom },
    });
    expect(await holdsOf(alerts[0]?.caseId as string)).toEqual([]);
  });
});

describe('a merchant’s refunds over its captures', () => {
  it('raises one alert when refunds of older sales exceed what the window captured', async () => {
    const m = await aMerchant(h);
    const payer = await aPayer(h, m);
    const paid: number[] = [];
    for (let i = 0; i < 4; i++) {
      const order = await payments(h, m, 'POST', '/order', anOrder(payer, { amount: '40.00' }));
      expect(order.status, order.text).toBe(201);
      paid.push(order.body.data.transactionId as number);
    }
    await h.advanceClock(3 * DAY);
    // Two refunds: under the count; then a small new sale and two more refunds
    for (const id of paid.slice(0, 2))
      expect((await payments(h, m, 'DELETE', `/transaction/${id}`)).status).toBe(200);
    await h.advanceClock(DAY);
    expect(await alertsOf(`merchant:${m.id}`, 'refunds_over_captures')).toEqual([]);
    expect((await payments(h, m, 'POST', '/order', anOrder(payer, { amount: '15.00' }))).status).toBe(201);
    for (const id of paid.slice(2))
      expect((await payments(h, m, 'DELETE', `/transaction/${id}`)).status).toBe(200);
    await h.advanceClock(DAY);
    await h.advanceClock(DAY);
    const alerts = await alertsOf(`merchant:${m.id}`, 'refunds_over_captures');
    expect(alerts).toHaveLength(1);
    expect(alerts[0]?.evidence.summary).toBe(
      '4 refunds and credits of 160.00 EUR over 2 days, against 15.00 EUR captured',
    );
  });
});

describe('a merchant’s unusual volume', () => {
  it('raises one alert for a day far over its own baseline, none for its ordinary days', async () => {
    const m = await aMerchant(h);
    const payer = await aPayer(h, m);
    const sell = async (amount: string) =>
      expect((await payments(h, m, 'POST', '/order', anOrder(payer, { amount }))).status).toBe(201);
    // A month of ordinary days: 20.00 EUR every few days, each judged as the rollup counts it
    for (let day = 0; day < 32; day += 4) {
      await sell('20.00');
      await h.advanceClock(4 * DAY);
      await h.advanceClock(1);
    }
    expect(await alertsOf(`merchant:${m.id}`, 'unusual_volume')).toEqual([]);
    // Then one day of 600.00 EUR
    for (let i = 0; i < 3; i++) await sell('200.00');
    await h.advanceClock(DAY);
    await h.advanceClock(1);
    const alerts = await alertsOf(`merchant:${m.id}`, 'unusual_volume');
    expect(alerts).toHaveLength(1);
    expect(alerts[0]?.evidence.summary).toMatch(
      /^600\.00 EUR on \d{4}-\d{2}-\d{2}, against an average day of /,
    );
  });
});

describe('a cardholder’s unusual volume', () => {
  it('raises one alert for a day of card spending far over their own baseline, none for their ordinary days', async () => {
    const customer = await aCustomer(h, partner.apiKey);
    const accountId = await anAccount(h, customer.auth);
    await aCompletedTopup(h, customer, accountId, '1000.00');
    const card = await h.request<{ cardId: string }>('POST', '/issuing/v1/cards', {
      headers: await customer.relogin(),
      json: { isVirtual: true, currency: 'EUR' },
    });
    const spend = async (amount: string) => {
      const paid = await h.request<{ status: string }>('POST', '/sandbox/issuing/authorizations', {
        headers: { authorization: `Bearer ${h.adminToken}` },
        json: { cardId: card.body.cardId, amount, currency: 'EUR', merchant: 'Corner Shop' },
      });
      expect(paid.body.status).toBe('authorized');
    };
    await h.advanceClock(DAY);
    // A month of ordinary days: 20.00 EUR every few days, each day judged once it is over
    for (let day = 0; day < 32; day += 4) {
      await spend('20.00');
      await h.advanceClock(4 * DAY);
      await h.advanceClock(1);
    }
    const unusual = async () =>
      (await alertsOf(`partner:${partner.id}`, 'unusual_volume')).filter((a) =>
        a.evidence.summary.includes('spent by card'),
      );
    expect(await unusual()).toEqual([]);
    // Then one day of 600.00 EUR
    for (let i = 0; i < 3; i++) await spend('200.00');
    await h.advanceClock(DAY);
    await h.advanceClock(1);
    const alerts = await unusual();
    expect(alerts).toHaveLength(1);
    expect(alerts[0]?.evidence.summary).toMatch(
      /^600\.00 EUR spent by card on \d{4}-\d{2}-\d{2}, against an average day of 5\.\d\d over the \d+ before$/,
    );
    const detail = await h.admin<{ case: { subject: string } }>(
      'GET',
      `/compliance/cases/${alerts[0]?.caseId}`,
    );
    expect(detail.body.case.subject).toBe(`customer:${customer.customerId}`);
    expect(await holdsOf(alerts[0]?.caseId as string)).toEqual([]);
    // The rollup keeps a row per day with payments, no more
    const rows = await h.services.db
      .selectFrom('issuing_cardholder_daily_spend')
      .select(['day', 'spent', 'payments'])
      .where('customer_id', '=', customer.customerId)
      .execute();
    expect(rows.map((r) => [r.spent, r.payments]).sort()).toEqual([
      ...Array.from({ length: 8 }, () => ['2000', 1]),
      ['60000', 3],
    ]);
  });
});

describe('a high-risk country', () => {
  it('raises one alert for an owner of a listed country, holding nothing', async () => {
    const m = await aMerchant(h);
    const profile = {
      legalName: 'Caspian Carpets LLC',
      registrationNumber: 'C-2231',
      country: 'AE',
      address: { line1: 'Warehouse 9', city: 'Dubai', postalCode: '00000', country: 'AE' },
      mcc: '5713',
      owners: [
        {
          name: 'Reza Karimi',
          dateOfBirth: '1977-06-01',
          nationality: 'IR',
          countryOfResidence: 'AE',
          ownershipPercent: 60,
        },
      ],
      directors: [{ name: 'Omar Haddad', dateOfBirth: '1980-02-14', nationality: 'AE' }],
    };
    expect((await h.admin('PUT', `/merchants/${m.id}/business-profile`, { json: profile })).status).toBe(200);
    // Written again unchanged: no second alert
    await h.admin('PUT', `/merchants/${m.id}/business-profile`, {
      json: { ...profile, website: 'https://caspian.example' },
    });
    const alerts = await alertsOf(`merchant:${m.id}`, 'high_risk_country');
    expect(alerts.map((a) => a.evidence.summary)).toEqual(['owner Reza Karimi: IR is a high-risk country']);
    expect(await holdsOf(alerts[0]?.caseId as string)).toEqual([]);
  });
});
