// Screening everyone on the other side, and the cases it opens (docs/compliance.md), through the public
// routes: a list update that newly lists a cardholder suspends their cards at the re-screen, with no
// authorization approved after the hold commits; a payout bank account's holder matched as it is set
// holds the site's payouts (reconcile still clean) until the case is cleared; a match once cleared is not
// raised again; a crash in a re-screen leaves no half state; the case routes' bad inputs.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import { aCompletedTopup, aCustomer, anAccount, fundAccount } from '../harness/issuing-builders.ts';
import { expectReconciledToday } from '../harness/ledger-invariants.ts';
import { aMerchant, anOrder, aCustomer as aPayer, payments } from '../harness/payments-builders.ts';
import { type ListedPerson, unList } from '../harness/un-list.ts';

type Person = ListedPerson;

const EARLIER: Person = { id: '6900001', first: 'IVAN', second: 'EXAMPLOV', dateOfBirth: '1961-05-04' };
const BORIS: Person = { id: '6900002', first: 'BORIS', second: 'LISTOVSKY', dateOfBirth: '1970-03-04' };
const VERA: Person = { id: '6900003', first: 'VERA', second: 'ZAKHARCHENKO', dateOfBirth: '1982-11-20' };
const MARTA: Person = { id: '6900004', first: 'MARTA', second: 'KOVALENKOVA', dateOfBirth: '1975-07-01' };
const RUSLAN: Person = { id: '6900005', first: 'RUSLAN', second: 'TIMOFEYEVICH', dateOfBirth: '1966-02-12' };
const GALINA: Person = { id: '6900006', first: 'GALINA', second: 'PRUZHANSKAYA', dateOfBirth: '1979-09-09' };

interface CaseDetail {
  case: { id: string; subject: string; status: string; alerts: number; decidedBy: string | null };
  alerts: {
    entryId: string;
    score: number;
    evidence: { party: { name: string }; entry: { names: string[] } };
  }[];
  notes: { body: string }[];
  holds: { objectKind: string; objectId: string; previousStatus: string | null; releasedAt: string | null }[];
  error?: { field?: string; message: string };
}
interface Tx {
  transactionId: string;
  status: string;
  declineReason: string | null;
}

let h: Harness;
let partner: { apiKey: string; id: string };
/** The next statement matching this is sent on a connection cut under it: the process died there */
let cutAt: RegExp | undefined;
let stamps = 0;

beforeAll(async () => {
  h = await Harness.start({
    captureLogs: true,
    observeStatement: (statement, connection) => {
      if (!cutAt?.test(statement)) return;
      cutAt = undefined;
      connection.destroy();
    },
  });
  partner = (await h.admin<typeof partner>('POST', '/partners', { json: { name: 'Screened partner' } })).body;
  expect((await importUn([EARLIER])).status).toBe(201);
});
afterAll(() => h.close());

const importUn = (people: Person[]) =>
  h.admin<{ id: string; rescreen: { screened: number; finishedAt: string | null } | null }>(
    'POST',
    '/compliance/sanctions/imports?source=un',
    {
      body: unList(people, `2026-12-0${1 + (stamps++ % 9)}T0${stamps % 10}:00:00.000Z`),
      headers: { 'content-type': 'application/xml' },
    },
  );
const openCaseOf = async (subject: string) => {
  const open = await h.admin<{ data: { id: string; subject: string }[] }>(
    'GET',
    '/compliance/cases?status=open&limit=100',
  );
  return open.body.data.find((c) => c.subject === subject);
};
const caseDetail = async (id: string) => (await h.admin<CaseDetail>('GET', `/compliance/cases/${id}`)).body;
const decide = (id: string, decision: string, reason = 'checked against the passport') =>
  h.admin<CaseDetail>('POST', `/compliance/cases/${id}/decision`, { json: { decision, reason } });
const authorize = (cardId: string, amount = '1.00') =>
  h.request<Tx>('POST', '/sandbox/issuing/authorizations', {
    headers: { authorization: `Bearer ${h.adminToken}` },
    json: { cardId, amount, currency: 'EUR', merchant: 'Corner Shop' },
  });

/** A cardholder whose KYC names them so, approved, with a funded EUR account and an active card */
async function aNamedCardholder(person: Person) {
  const customer = await aCustomer(h, partner.apiKey, { kyc: 'none' });
  const info = await h.request('POST', '/issuing/v1/kyc/personal-info', {
    headers: customer.auth,
    json: {
      firstName: person.first[0] + person.first.slice(1).toLowerCase(),
      lastName: person.second[0] + person.second.slice(1).toLowerCase(),
      dateOfBirth: person.dateOfBirth,
      nationality: 'RU',
    },
  });
  expect(info.status, info.text).toBe(200);
  await h.request('POST', `/sandbox/issuing/kyc/${customer.customerId}/decision`, {
    headers: { authorization: `Bearer ${h.adminToken}` },
    json: { status: 'approved' },
  });
  const auth = await customer.relogin();
  const accountId = await anAccount(h, auth);
  await fundAccount(h, accountId, 'EUR', 1_000_00n);
  const card = await h.request<{ cardId: string }>('POST', '/issuing/v1/cards', {
    headers: auth,
    json: { isVirtual: true, currency: 'EUR' },
  });
  expect(card.status, card.text).toBe(201);
  const status = async () =>
    (
      await h.request<{ status: string }>('GET', `/issuing/v1/cards/${card.body.cardId}`, {
        headers: await customer.relogin(),
      })
    ).body.status;
  return { ...customer, cardId: card.body.cardId, status };
}

describe('a cardholder newly listed', () => {
  it('has their cards suspended by the re-screen, no card issued, and everything back when the case is cleared', async () => {
    const boris = await aNamedCardholder(BORIS);
    const subject = `customer:${boris.customerId}`;
    expect(await openCaseOf(subject)).toBeUndefined();
    expect((await authorize(boris.cardId)).body.status).toBe('authorized');

    const listed = await importUn([EARLIER, BORIS]);
    expect(listed.status).toBe(201);
    expect(listed.body.rescreen).toMatchObject({ screened: 0, finishedAt: null });
    const swept = await h.advanceClock(1);
    expect(swept.processed['sanctions-rescreen']).toBeGreaterThanOrEqual(1);
    const imports = await h.admin<{ data: { id: string; rescreen: { finishedAt: string | null } }[] }>(
      'GET',
      '/compliance/sanctions/imports',
    );
    expect(imports.body.data.find((i) => i.id === listed.body.id)?.rescreen.finishedAt).not.toBeNull();

    const found = await openCaseOf(subject);
    expect(found).toBeDefined();
    const detail = await caseDetail(found?.id as string);
    expect(detail.case).toMatchObject({ status: 'open', alerts: 1 });
    expect(detail.alerts[0]?.evidence.party.name).toBe('Boris Listovsky');
    expect(detail.alerts[0]?.evidence.entry.names).toContain('BORIS LISTOVSKY');
    expect(detail.holds).toEqual([
      expect.objectContaining({ objectKind: 'subject', objectId: subject, releasedAt: null }),
      expect.objectContaining({ objectKind: 'card', objectId: boris.cardId, previousStatus: 'active' }),
    ]);
    expect(await boris.status()).toBe('suspended');
    expect((await authorize(boris.cardId)).body).toMatchObject({
      status: 'declined',
      declineReason: 'card_not_active',
    });
    // Only the case's decision gives the card back; no other card is issued meanwhile
    const reinstated = await h.admin('POST', `/issuing/cards/${boris.cardId}/reinstate`);
    expect(reinstated.status).toBe(409);
    const another = await h.request('POST', '/issuing/v1/cards', {
      headers: await boris.relogin(),
      json: { isVirtual: true, currency: 'EUR' },
    });
    expect(another.status).toBe(409);
    expect(another.text).not.toContain('compliance');

    const noted = await h.admin('POST', `/compliance/cases/${found?.id}/notes`, {
      json: { body: 'Date of birth agrees; asked the partner for the passport.' },
    });
    expect(noted.status).toBe(201);
    const cleared = await decide(found?.id as string, 'cleared', 'a namesake: passport differs');
    expect(cleared.status, cleared.text).toBe(200);
    expect(cleared.body.case).toMatchObject({ status: 'cleared', decidedBy: 'admin token' });
    expect(cleared.body.notes.map((n) => n.body)).toEqual([
      'Date of birth agrees; asked the partner for the passport.',
    ]);
    expect(cleared.body.holds.every((hold) => hold.releasedAt !== null)).toBe(true);
    expect(await boris.status()).toBe('active');
    expect((await authorize(boris.cardId)).body.status).toBe('authorized');
    expect((await decide(found?.id as string, 'confirmed')).status).toBe(409);
    // Exported for a report: the case's story in time order, as JSON and as CSV
    const exported = await h.admin<{ timeline: { kind: string; object: string | null }[] }>(
      'GET',
      `/compliance/cases/${found?.id}/export`,
    );
    expect(exported.body.timeline.map((t) => t.kind)).toEqual([
      'opened',
      'alert',
      'held',
      'held',
      'note',
      'released',
      'released',
      'decided',
    ]);
    expect(exported.body.timeline[1]?.object).toBe(`un:${BORIS.id}`);
    const csv = await h.admin('GET', `/compliance/cases/${found?.id}/export?format=csv`);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const lines = csv.text.trimEnd().split('\r\n');
    expect(lines[0]).toBe('at,kind,object,detail');
    expect(lines).toHaveLength(9);
    expect(lines.at(-1)).toMatch(/,decided,admin token,cleared: a namesake: passport differs$/);
    // goAML needs the reporting entity the FIU registered (test/compliance/goaml-export.test.ts)
    const goaml = await h.admin<CaseDetail>(
      'GET',
      `/compliance/cases/${found?.id}/export?format=goaml&indicators=X`,
    );
    expect(goaml.status).toBe(409);
    expect(goaml.body.error?.message).toContain('TESSERA_GOAML_RENTITY_ID');

    // The list published again with another change: the match once cleared is not raised again
    expect((await importUn([EARLIER, BORIS, RUSLAN])).status).toBe(201);
    await h.advanceClock(1);
    expect(await openCaseOf(subject)).toBeUndefined();
    expect(await boris.status()).toBe('active');
  });

  it('approves no authorization after the hold commits, under authorizations racing it', async () => {
    const vera = await aNamedCardholder(VERA);
    // Each authorization's statement made slower between its snapshot and its writes: the moment a hold
    // that ignored the account's ledger lock would slip into
    await sql
      .raw(`CREATE FUNCTION slow_authorization() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN PERFORM pg_sleep(0.02); RETURN NEW; END $$`)
      .execute(h.services.db);
    await sql
      .raw(
        'CREATE TRIGGER slow_authorization BEFORE INSERT ON issuing_transactions FOR EACH ROW EXECUTE FUNCTION slow_authorization()',
      )
      .execute(h.services.db);
    let stop = false;
    const outcomes: string[] = [];
    const racer = async () => {
      while (!stop) {
        const answer = await authorize(vera.cardId, '0.01');
        outcomes.push(answer.body.status);
      }
    };
    const racers = Array.from({ length: 8 }, racer);
    expect((await importUn([EARLIER, BORIS, RUSLAN, VERA])).status).toBe(201);
    await h.advanceClock(1);
    // Committed by now: every authorization approved is approved already
    const approvedAtHold = await approvedOf(vera.cardId);
    const answeredAtHold = outcomes.length;
    while (outcomes.length < answeredAtHold + 16) await new Promise((resolve) => setImmediate(resolve));
    stop = true;
    await Promise.all(racers);
    expect(await approvedOf(vera.cardId)).toBe(approvedAtHold);
    expect(outcomes.slice(answeredAtHold + 8).every((s) => s === 'declined')).toBe(true);
    expect(await vera.status()).toBe('suspended');
    // The hold and the authorizations lock in one order: no deadlock failed the re-screen
    expect(h.logs.join('')).not.toContain('sweep failed');
    await sql.raw('DROP TRIGGER slow_authorization ON issuing_transactions').execute(h.services.db);
  });
});

const approvedOf = async (cardId: string) =>
  Number(
    (
      await h.services.db
        .selectFrom('issuing_transactions')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('card_id', '=', cardId)
        .where('status', '=', 'authorized')
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('a payout bank account whose holder is listed', () => {
  it('holds the site’s payouts from the moment it is set, reconcile clean, and releases exactly them when cleared', async () => {
    const shop = await aMerchant(h);
    const siteId = shop.sites[0]?.id as number;
    await h.admin('PUT', `/merchants/${shop.id}/sites/${siteId}/payout-schedule`, {
      json: { interval: 'daily', delayDays: 0, minimum: '1.00' },
    });
    const set = await h.admin('PUT', `/merchants/${shop.id}/sites/${siteId}/bank-account`, {
      json: { iban: 'DE89370400440532013000', holderName: 'Marta Kovalenkova' },
    });
    expect(set.status, set.text).toBe(200);
    // Not listed yet: no case. Listed, the re-screen opens one and holds the site.
    expect(await openCaseOf(`site:${siteId}`)).toBeUndefined();
    expect((await importUn([EARLIER, BORIS, RUSLAN, VERA, MARTA])).status).toBe(201);
    await h.advanceClock(1);
    const found = await openCaseOf(`site:${siteId}`);
    expect(found).toBeDefined();

    const payer = await aPayer(h, shop);
    expect((await payments(h, shop, 'POST', '/order', anOrder(payer, { amount: '40.00' }))).status).toBe(201);
    const run = await h.admin<{ payouts: { id: string; siteId: number }[] }>('POST', '/payout-runs');
    const payoutId = run.body.payouts.find((p) => p.siteId === siteId)?.id as string;
    expect(payoutId).toBeDefined();
    const payoutStatus = async () =>
      (
        await h.services.db
          .selectFrom('payouts')
          .select('status')
          .where('id', '=', payoutId)
          .executeTakeFirstOrThrow()
      ).status;
    expect(await payoutStatus()).toBe('held');
    await h.advanceClock(86_400);
    expect(await payoutStatus()).toBe('held');
    expect((await caseDetail(found?.id as string)).holds).toEqual(
      expect.arrayContaining([expect.objectContaining({ objectKind: 'payout', objectId: payoutId })]),
    );

    const confirmed = await decide(found?.id as string, 'confirmed', 'the holder is the listed person');
    expect(confirmed.status).toBe(200);
    await h.advanceClock(86_400);
    expect(await payoutStatus()).toBe('held');
    await expectReconciledToday(h);

    // Delisted: a later decision clears it, and the payout goes on to the bank
    expect((await decide(found?.id as string, 'cleared', 'delisted on appeal')).status).toBe(200);
    expect(await payoutStatus()).not.toBe('held');
  });
});

describe('a crash during a re-screen', () => {
  it('leaves no half state: the batch is screened again, one case, its card suspended once', async () => {
    const galina = await aNamedCardholder(GALINA);
    expect((await importUn([EARLIER, BORIS, RUSLAN, VERA, MARTA, GALINA])).status).toBe(201);
    cutAt = /update "compliance_rescreens"/i;
    await h.advanceClock(1);
    expect(cutAt).toBeUndefined();
    expect(await openCaseOf(`customer:${galina.customerId}`)).toBeUndefined();
    expect(await galina.status()).toBe('active');
    await h.advanceClock(1);
    const found = await openCaseOf(`customer:${galina.customerId}`);
    expect(found).toBeDefined();
    const detail = await caseDetail(found?.id as string);
    expect(detail.holds.filter((hold) => hold.objectKind === 'card')).toHaveLength(1);
    expect(await galina.status()).toBe('suspended');
  });
});

describe('a structuring pattern of topups', () => {
  it('raises exactly one alert, holds nothing until the case is confirmed', async () => {
    const petra = await aNamedCardholder({
      id: '0',
      first: 'PETRA',
      second: 'LINDQVIST',
      dateOfBirth: '1990-01-30',
    });
    const accountId = (
      await h.request<{ data: { accountId: string }[] }>('GET', '/issuing/v1/accounts', {
        headers: await petra.relogin(),
      })
    ).body.data[0]?.accountId as string;
    const topUp = (amount: string) => aCompletedTopup(h, petra, accountId, amount);
    const alerts = async () =>
      (
        await h.admin<{ data: { kind: string; caseId: string; evidence: { topups: unknown[] } }[] }>(
          'GET',
          `/compliance/alerts?tenant=partner:${partner.id}`,
        )
      ).body.data.filter((a) => a.kind === 'scenario:structuring');
    // Three just under 1,000.00 EUR within 24 hours (an ordinary one between), then one more of the same run
    await topUp('950.00');
    await h.advanceClock(2 * 3600);
    await topUp('980.00');
    await h.advanceClock(2 * 3600);
    await topUp('120.00');
    expect(await alerts()).toEqual([]);
    await topUp('999.99');
    await h.advanceClock(3600);
    await topUp('955.00');
    const [alert, ...more] = await alerts();
    expect(more).toEqual([]);
    expect(alert?.evidence.topups).toHaveLength(3);
    // An alert of a scenario holds nothing; a person confirming the case does
    expect(await petra.status()).toBe('active');
    expect(
      (await decide(alert?.caseId as string, 'confirmed', 'structuring confirmed by the partner')).status,
    ).toBe(200);
    expect(await petra.status()).toBe('suspended');
  });
});

describe('the case routes’ bad inputs', () => {
  it('answers each with the field named, an unknown case 404', async () => {
    const [someCase] = (await h.admin<{ data: { id: string }[] }>('GET', '/compliance/cases?limit=1')).body
      .data;
    const id = someCase?.id as string;
    const wrongDecision = await h.admin<CaseDetail>('POST', `/compliance/cases/${id}/decision`, {
      json: { decision: 'maybe', reason: 'x' },
    });
    expect(wrongDecision.status).toBe(400);
    expect(wrongDecision.body.error?.field).toBe('decision');
    const noReason = await h.admin<CaseDetail>('POST', `/compliance/cases/${id}/decision`, {
      json: { decision: 'cleared', reason: ' ' },
    });
    expect(noReason.status).toBe(400);
    expect(noReason.body.error?.field).toBe('reason');
    const emptyNote = await h.admin<CaseDetail>('POST', `/compliance/cases/${id}/notes`, {
      json: { body: '' },
    });
    expect(emptyNote.body.error?.field).toBe('body');
    for (const unknown of ['999999999', 'abc', '0']) {
      expect((await h.admin('GET', `/compliance/cases/${unknown}`)).status).toBe(404);
      expect((await decide(unknown, 'cleared')).status).toBe(404);
    }
    const badStatus = await h.admin<CaseDetail>('GET', '/compliance/cases?status=closed');
    expect(badStatus.body.error?.field).toBe('status');
    const badAssignee = await h.admin<CaseDetail>('POST', `/compliance/cases/${id}/assign`, {
      json: { assignee: 5 },
    });
    expect(badAssignee.status).toBe(400);
    expect(badAssignee.body.error?.field).toBe('assignee');
    const badCase = await h.admin<CaseDetail>('GET', '/compliance/alerts?caseId=abc');
    expect(badCase.body.error?.field).toBe('caseId');
    const badFormat = await h.admin<CaseDetail>('GET', `/compliance/cases/${id}/export?format=pdf`);
    expect(badFormat.body.error?.field).toBe('format');
    expect((await h.admin('GET', '/compliance/cases/999999999/export')).status).toBe(404);
  });
});
