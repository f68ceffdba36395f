// A customer's way through the card issuing API, end to end over HTTP with @tessera/sdk's typed client
// (the sandbox's simulated world through its own routes): registration by email, KYC with
// both hosted document checks, approval, an account, a card, topups by bank transfer, by card on the
// hosted page and in crypto, authorizations with a 3D Secure challenge approved, one declined and one
// timed out (clock advanced), clearing; every webhook verified, the balance checked, and the ledger's
// invariants over the whole database.
import { IssuingApiError, issuingClient, verifyIssuingWebhook } from '@tessera/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import { expectLedgerInvariants } from '../harness/ledger-invariants.ts';
import { WebhookReceiver } from '../harness/webhook-receiver.ts';

let h: Harness;
let receiver: WebhookReceiver;

beforeAll(async () => {
  h = await Harness.start();
  receiver = await WebhookReceiver.start();
});
afterAll(async () => {
  await h.close();
  await receiver.close();
});

describe('card issuing journey', () => {
  it('takes a customer from registration to settled card payments', async () => {
    const admin = { authorization: `Bearer ${h.adminToken}` };
    const partner = (
      await h.admin<{ partnerId: string; webhookSigningKey: string }>('POST', '/partners', {
        json: { name: 'Journey Bank', webhookUrl: receiver.url('/journey') },
      })
    ).body;
    const app = issuingClient({ baseUrl: h.baseUrl, partnerId: partner.partnerId });

    // Registration by email, with the code the notifier sent.
    const registered = await app.POST('/auth/register/email', {
      body: { email: 'ada@journey.test', password: 'Str0ng!pass' },
    });
    expect(registered.response.status).toBe(202);
    const message = await h.request<{ data: { body: string }[] }>(
      'GET',
      '/sandbox/messages?recipient=ada@journey.test&limit=1',
      { headers: admin },
    );
    const code = /\b(\d{6})\b/.exec(message.body.data[0]?.body ?? '')?.[1] ?? '';
    const tokens = (
      await app.POST('/auth/register/email/verify', { body: { email: 'ada@journey.test', code } })
    ).data;
    if (!tokens) throw new Error('no tokens');
    const { customerId } = tokens;
    const me = issuingClient({
      baseUrl: h.baseUrl,
      partnerId: partner.partnerId,
      accessToken: tokens.accessToken,
    });

    // KYC: every step, both hosted document checks, then the review decision.
    await me.POST('/kyc/agreement', { body: { termsAccepted: true, privacyPolicyAccepted: true } });
    await me.POST('/kyc/personal-info', {
      body: { firstName: 'Ada', lastName: 'Lovelace', dateOfBirth: '1990-12-10', nationality: 'GB' },
    });
    await me.POST('/kyc/residence', {
      body: { country: 'RO', city: 'Bucharest', postalCode: '010101', addressLine1: 'Str. Exemplu 1' },
    });
    await me.POST('/kyc/gender', { body: { gender: 'female' } });
    await me.POST('/kyc/birthplace', { body: { country: 'GB', city: 'London' } });
    await me.POST('/kyc/wealth-and-income', {
      body: {
        employmentStatus: 'employed',
        annualIncome: '50k_100k',
        sourceOfFunds: ['salary'],
        expectedMonthlySpend: '1k_5k',
      },
    });
    await me.POST('/kyc/pep', { body: { isPoliticallyExposed: false } });
    for (const start of [
      () => me.POST('/kyc/id-verification/start', {}),
      () => me.POST('/kyc/poa-verification/start', {}),
    ]) {
      const started = { body: (await start()).data as { url: string } };
      const form = new FormData();
      form.set('outcome', 'verified');
      form.set(
        'document',
        new Blob([new Uint8Array([0x89, 0x50, 0x4e, 0x47])], { type: 'image/png' }),
        'document.png',
      );
      expect(await (await fetch(started.body.url, { method: 'POST', body: form })).text()).toContain(
        'data-result="verified"',
      );
    }
    expect((await me.GET('/kyc', {})).data?.status).toBe('pending_review');
    await h.request('POST', `/sandbox/issuing/kyc/${customerId}/decision`, {
      headers: admin,
      json: { status: 'approved' },
    });

    // Account, card, and a bank topup of 200.00.
    const account = (await me.POST('/accounts', { body: { currency: 'EUR' } })).data ?? { accountId: '' };
    const card = (await me.POST('/cards', { body: { isVirtual: true, currency: 'EUR', label: 'Everyday' } }))
      .data ?? {
      cardId: '',
      status: '',
    };
    expect(card.status).toBe('active');
    const topup = (
      await me.POST('/topups/fiat', { body: { accountId: account.accountId, amount: '200.00' } })
    ).data as { topupId: string };
    await h.request('POST', `/sandbox/issuing/topups/${topup.topupId}/complete`, { headers: admin });
    // 30.00 by card on the hosted page the fiat topup answers with.
    const byCard = (
      await me.POST('/topups/fiat', { body: { accountId: account.accountId, amount: '30.00' } })
    ).data as { paymentUrl: string };
    const paid = await fetch(byCard.paymentUrl, {
      method: 'POST',
      body: new URLSearchParams({
        cardHolderName: 'Ada Lovelace',
        cardNumber: '5555555555554444',
        cardExpiryDate: `12/${String((new Date().getUTCFullYear() + 2) % 100).padStart(2, '0')}`,
        cardCvv: '123',
      }),
      redirect: 'manual',
    });
    expect(paid.status).toBe(303);
    // 20.00 in USDC on Polygon at a pinned rate of 1: 20.20 USDC with the fee, credited once final.
    await h.request('POST', '/sandbox/fx/rates', {
      headers: admin,
      json: { from: 'USDC', to: 'EUR', rate: '1' },
    });
    const inCrypto = (
      await me.POST('/topups/crypto', {
        body: { accountId: account.accountId, amount: '20.00', currency: 'USDC', network: 'POLYGON' },
      })
    ).data as { topupId: string; crypto: { amount: string } };
    expect(inCrypto.crypto.amount).toBe('20.2');
    await h.request('POST', `/sandbox/issuing/topups/${inCrypto.topupId}/pay-crypto`, {
      headers: admin,
      json: {},
    });
    await h.advanceClock(128);

    const authorize = async (amount: string, threeDS: boolean) =>
      (
        await h.request<{
          transactionId: string;
          status: string;
          threeDS: { transactionAuthId: string } | null;
        }>('POST', '/sandbox/issuing/authorizations', {
          headers: admin,
          json: { cardId: card.cardId, amount, currency: 'EUR', merchant: 'Bookshop', threeDS },
        })
      ).body;
    const decide = async (authId: string, authStatus: 'success' | 'failed') =>
      (
        await me
          .PATCH('/transactions/3d-secure/{transactionAuthId}', {
            params: { path: { transactionAuthId: authId } },
            body: { authType: 'fingerprint', authStatus },
          })
          .catch((err: unknown) => {
            if (err instanceof IssuingApiError) return { data: { status: `HTTP ${err.status}` } };
            throw err;
          })
      ).data?.status;

    // 3DS approved → authorized → cleared for less.
    const approved = await authorize('50.00', true);
    expect(await decide(approved.threeDS?.transactionAuthId ?? '', 'success')).toBe('authorized');
    const cleared = await h.request<{ status: string }>(
      'POST',
      `/sandbox/issuing/transactions/${approved.transactionId}/clear`,
      { headers: admin, json: { amount: '45.00' } },
    );
    expect(cleared.body.status).toBe('settled');
    // 3DS declined.
    const declined = await authorize('20.00', true);
    expect(await decide(declined.threeDS?.transactionAuthId ?? '', 'failed')).toBe('declined');
    // 3DS timed out: the clock passes the challenge's expiry.
    const timedOut = await authorize('30.00', true);
    await h.advanceClock(601);
    expect(await decide(timedOut.threeDS?.transactionAuthId ?? '', 'success')).toBe('HTTP 409');
    // A plain authorization, cleared in full.
    const plain = await authorize('5.00', false);
    await h.request('POST', `/sandbox/issuing/transactions/${plain.transactionId}/clear`, { headers: admin });

    const accounts = await me.GET('/accounts', {});
    expect(accounts.data?.data[0]).toMatchObject({
      balance: '200.00',
      availableBalance: '200.00',
      pendingAmount: '0.00',
    });

    // Every webhook arrives signed, in the spec's envelope, about this customer.
    const expected = {
      kycStatusChanged: 3, // in_progress, pending_review, approved
      cardStatusChanged: 1,
      topupCreated: 3,
      topupStatusChanged: 4, // bank completed, card completed, crypto confirming and completed
      transactionCreated: 4,
      transaction3dsRequested: 3,
      transaction3dsCompleted: 3,
      transactionSettled: 2,
    };
    const total = Object.values(expected).reduce((a, b) => a + b, 0);
    const deliveries = await receiver.waitFor(total, (r) => r.body.includes(customerId));
    const events = await Promise.all(
      deliveries.map((r) =>
        verifyIssuingWebhook<{ eventType: string; eventId: string; customerId: string }>(
          r.body,
          r.headers['x-service-signature'] as string,
          partner.webhookSigningKey,
        ),
      ),
    );
    const counts: Record<string, number> = {};
    for (const e of events) counts[e.eventType] = (counts[e.eventType] ?? 0) + 1;
    expect(counts).toEqual(expected);
    expect(new Set(events.map((e) => e.eventId)).size).toBe(total);
    const completed = events.filter((e) => e.eventType === 'transaction3dsCompleted') as unknown as {
      data: { status: string };
    }[];
    expect(completed.map((e) => e.data.status).sort()).toEqual(['authorized', 'declined', 'timeout']);

    // The ledger's invariants hold over everything that happened.
    await expectLedgerInvariants(h);
  });
});
