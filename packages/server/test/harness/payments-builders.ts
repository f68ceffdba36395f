// Builders for payments tests, through the real admin and payments routes (form-encoded, as clients do).
import { decryptIpn } from '@tessera/sdk';
import type { Harness } from './harness.ts';
import type { WebhookReceiver } from './webhook-receiver.ts';

export interface TestMerchant {
  id: number;
  apiKey: string;
  apiKeyId: string;
  sites: {
    id: number;
    name: string;
    ipnUrl: string | null;
    /** sk_test_<key>: what the real service's SDK is configured with */
    secretKey: string;
    /** pk_test_<siteId> */
    publicKey: string;
    ipnSecret: string;
  }[];
  auth: Record<string, string>;
}

export async function aMerchant(
  h: Harness,
  options: { ipnUrl?: string; sites?: number } = {},
): Promise<TestMerchant> {
  const sites = Array.from({ length: options.sites ?? 1 }, (_, i) => ({
    name: `Site ${i + 1}`,
    ...(options.ipnUrl ? { ipnUrl: options.ipnUrl } : {}),
  }));
  const created = await h.admin<Omit<TestMerchant, 'auth'>>('POST', '/merchants', {
    json: { name: `Merchant ${Math.random().toString(36).slice(2, 8)}`, sites },
  });
  if (created.status !== 201) throw new Error(`merchant not created: ${created.text}`);
  return { ...created.body, auth: { authorization: `Bearer ${created.body.apiKey}` } };
}

/** A payments API call with the merchant's key, the body form-encoded (bracket keys allowed). */
export function payments<T = PaymentsEnvelope>(
  h: Harness,
  m: TestMerchant,
  method: string,
  path: string,
  form?: Record<string, string>,
) {
  return h.request<T>(method, `/payments${path}`, { headers: m.auth, ...(form ? { form } : {}) });
}

export interface PaymentsEnvelope {
  code: number;
  message: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever the route answers
  data: any;
  error?: { code: number; message: string; type: string; field?: string }[];
  pagination?: Record<string, number>;
}

export async function aCustomer(
  h: Harness,
  m: TestMerchant,
  overrides: Record<string, string> = {},
): Promise<number> {
  const response = await payments(h, m, 'POST', '/customer', {
    identifier: `cust-${Math.random().toString(36).slice(2, 10)}`,
    email: 'buyer@example.com',
    firstName: 'Ada',
    lastName: 'Lovelace',
    country: 'RO',
    ...overrides,
  });
  if (response.status !== 201) throw new Error(`customer not created: ${response.text}`);
  return response.body.data.id;
}

/** A future expiry as MM/YY. */
export const FUTURE_EXPIRY = `12/${String((new Date().getUTCFullYear() + 3) % 100).padStart(2, '0')}`;

export function newCard(cardNumber = '4111111111111111'): Record<string, string> {
  return {
    cardNumber,
    cardExpiryDate: FUTURE_EXPIRY,
    cardCvv: cardNumber.startsWith('37') ? '1234' : '123',
    cardHolderName: 'Ada Lovelace',
    cardHolderCountry: 'RO',
  };
}

export function anOrder(customerId: number, fields: Record<string, string> = {}): Record<string, string> {
  return {
    amount: '10.90',
    currency: 'EUR',
    orderType: 'purchase',
    customerId: String(customerId),
    description: 'A test order',
    ...newCard(),
    ...fields,
  };
}

export interface Ipn {
  status: string;
  orderStatus: string;
  orderId: number;
  transactionId?: number;
  transactionStatus?: string;
  transactionType?: string;
  externalCustomData: string | null;
  amount: number;
  currency: string;
  errors?: { code: number; message: string }[];
  [key: string]: unknown;
}

/** Every IPN the receiver got, decrypted with the site's secret (as a merchant's server would). */
export function decryptIpns(receiver: WebhookReceiver, secret: string): Ipn[] {
  return receiver.received.map((r) => {
    const form = new URLSearchParams(r.body);
    const opensslResult = form.get('opensslResult') ?? '';
    if (form.get('result') !== opensslResult) throw new Error('the legacy result field differs');
    return decryptIpn<Ipn>(opensslResult, secret);
  });
}

/** The buyer pays on a hosted card page (its HTML) with the approved test Visa, as a browser posts it. */
export function payOnCardPage(h: Harness, pageHtml: string, holder: { name: string; country: string }) {
  return h.request('POST', '/checkout/pay', {
    form: {
      ...hiddenFields(pageHtml),
      cardHolderName: holder.name,
      cardNumber: '4111111111111111',
      cardExpiryDate: FUTURE_EXPIRY,
      cardCvv: '123',
      cardHolderCountry: holder.country,
    },
  });
}

/** The hidden fields of a hosted page's form (the card page carries the request to its own form). */
export function hiddenFields(html: string): Record<string, string> {
  const unescapeHtml = (text: string) =>
    text
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
  return Object.fromEntries(
    [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((x) => [
      x[1] ?? '',
      unescapeHtml(x[2] ?? ''),
    ]),
  );
}

/**
 * A new merchant's site paid out by hand: manual schedule, a bank account for `holderName`, one captured
 * order, a second on the sandbox clock, then a payout of the site's EUR balance. Answers the payout's id.
 */
export async function aSitePayout(
  h: Harness,
  holderName: string,
): Promise<{ merchant: TestMerchant; payoutId: string }> {
  const merchant = await aMerchant(h);
  const site = merchant.sites[0]?.id;
  await h.admin('PUT', `/merchants/${merchant.id}/sites/${site}/payout-schedule`, {
    json: { interval: 'manual', delayDays: 0 },
  });
  await h.admin('PUT', `/merchants/${merchant.id}/sites/${site}/bank-account`, {
    json: { iban: 'DE89370400440532013000', holderName },
  });
  await payments(h, merchant, 'POST', '/order', anOrder(await aCustomer(h, merchant)));
  await h.advanceClock(1);
  const payout = await h.admin<{ id: string }>('POST', `/merchants/${merchant.id}/sites/${site}/payouts`, {
    json: { currency: 'EUR' },
  });
  if (payout.status !== 201) throw new Error(`payout not created: ${payout.status} ${payout.text}`);
  return { merchant, payoutId: payout.body.id };
}
