// Builders for crypto tests, through the real admin, session and order routes (no raw inserts).
import { verifyCryptoWebhook } from '@tessera/sdk';
import { type Event, WebhookValidator } from '@utrustdev/utrust-ts-library';
import type { Harness } from './harness.ts';
import type { ReceivedRequest, WebhookReceiver } from './webhook-receiver.ts';

export interface TestStore {
  id: string;
  clientId: string;
  clientSecret: string;
  webhookSecret: string;
  key: string;
  auth: Record<string, string>;
}

/** What the builders need of a running Tessera: the in-process harness, or a real `tessera serve`. */
export type RunningTessera = Pick<Harness, 'request' | 'adminToken'>;

export async function aStore(
  h: RunningTessera,
  options: {
    webhookUrl?: string;
    refundsEnabled?: boolean;
    currencies?: { currency: string; network: string }[];
  } = {},
): Promise<TestStore> {
  const created = await h.request<{
    id: string;
    clientId: string;
    clientSecret: string;
    webhookSecret: string;
  }>('POST', '/admin/stores', {
    headers: { authorization: `Bearer ${h.adminToken}` },
    json: { name: `Store ${Math.random().toString(36).slice(2, 8)}`, ...options },
  });
  if (created.status !== 201) throw new Error(`store not created: ${created.text}`);
  const session = await h.request<{ data: { id: string } }>('POST', '/crypto/api/stores/session', {
    json: {
      data: {
        type: 'session',
        attributes: { client_id: created.body.clientId, client_secret: created.body.clientSecret },
      },
    },
  });
  if (session.status !== 200) throw new Error(`no session: ${session.text}`);
  const key = session.body.data.id;
  return { ...created.body, key, auth: { authorization: `Bearer ${key}` } };
}

export function orderDocument(
  overrides: {
    total?: string;
    currency?: string;
    reference?: string;
    callbackUrl?: string;
    expiresAt?: string;
    exchangeRateId?: string;
  } = {},
) {
  return {
    data: {
      type: 'orders',
      attributes: {
        order: {
          reference: overrides.reference ?? `order-${Math.random().toString(36).slice(2, 8)}`,
          amount: { total: overrides.total ?? '10.90', currency: overrides.currency ?? 'EUR' },
          return_urls: {
            return_url: 'https://shop.example/return',
            cancel_url: 'https://shop.example/cancel',
            ...(overrides.callbackUrl ? { callback_url: overrides.callbackUrl } : {}),
          },
          line_items: [
            {
              sku: 'T-1',
              name: 'T-shirt',
              price: overrides.total ?? '10.90',
              currency: overrides.currency ?? 'EUR',
              quantity: 1,
            },
          ],
          ...(overrides.expiresAt ? { expires_at: overrides.expiresAt } : {}),
          ...(overrides.exchangeRateId ? { exchange_rate_id: overrides.exchangeRateId } : {}),
        },
        customer: { first_name: 'Ada', last_name: 'Buyer', email: 'ada@example.com', country: 'RO' },
      },
    },
  };
}

export async function anOrder(
  h: RunningTessera,
  store: TestStore,
  overrides: Parameters<typeof orderDocument>[0] = {},
) {
  const res = await h.request<{ data: { id: string; attributes: { redirect_url: string } } }>(
    'POST',
    '/crypto/api/stores/orders',
    { headers: store.auth, json: orderDocument(overrides) },
  );
  if (res.status !== 201) throw new Error(`order not created: ${res.text}`);
  return { id: res.body.data.id, redirectUrl: res.body.data.attributes.redirect_url };
}

/** The buyer picks a currency on the hosted pay page; answers what the page says to send, and where. */
export async function chooseOnPayPage(h: RunningTessera, orderId: string, option: string) {
  // The form's answer redirects to the page, which shows the address, the amount and a QR code.
  const page = await h.request('POST', `/crypto/pay/${orderId}/choose`, { form: { option } });
  const address = /data-field="address">(0x[0-9a-fA-F]{40})</.exec(page.text)?.[1] as
    | `0x${string}`
    | undefined;
  const amount = /data-field="crypto-amount">([\d.]+)</.exec(page.text)?.[1];
  if (page.status !== 200 || !address || !amount)
    throw new Error(`no address or amount on the page (${page.status}):\n${page.text}`);
  return { address, amount, page: page.text };
}

/** The buyer cancels on the pay page: the form posts the token the page was rendered with. */
export async function cancelOnPayPage(
  h: RunningTessera,
  orderId: string,
  headers: Record<string, string> = {},
) {
  const page = await h.request('GET', `/crypto/pay/${orderId}`);
  const token = /name="token" value="([^"]+)"/.exec(page.text)?.[1];
  if (!token) throw new Error(`no cancel form on the page (${page.status})`);
  return h.request('POST', `/crypto/pay/${orderId}/cancel`, { form: { token }, headers });
}

export interface OrderAttributes {
  status: string;
  reference: string;
  total_amount: { currency: string; value: string };
  amount_paid: { value: string };
  amount_pending: { value: string };
  amount_due: { value: string };
  amount_over: { value: string };
  payment_uuid: string | null;
  refundable: boolean;
  transfers: {
    transaction_hash: string;
    currency: string;
    status: string;
    confirmations: number;
    confirmations_required: number;
    late: boolean;
    amount: string;
    value: { value: string };
  }[];
}

export async function orderOf(h: RunningTessera, store: TestStore, id: string) {
  const res = await h.request<{ data: { attributes: OrderAttributes } }>(
    'GET',
    `/crypto/api/stores/orders/${id}`,
    {
      headers: store.auth,
    },
  );
  if (res.status !== 200) throw new Error(`order not read: ${res.text}`);
  return res.body.data.attributes;
}

/** The buyer pays on the simulated chain (exactly what is due unless an amount is given). */
export async function pay(
  h: Harness,
  orderId: string,
  body: { currency?: string; network?: string; amount?: string; offramp?: boolean; sender?: string } = {},
) {
  return h.request<{ transactionHash: string; amount: string; address: string }>(
    'POST',
    `/sandbox/crypto/orders/${orderId}/pay`,
    {
      headers: { authorization: `Bearer ${h.adminToken}` },
      json: { currency: 'USDC', network: 'ETH', ...body },
    },
  );
}

export interface CryptoHook {
  event_id: string;
  event_type: string;
  state: string;
  resource: Record<string, string>;
}

/**
 * The webhooks one order (or payment) received, in the order they arrived, as the store's event log tells them. Each
 * delivery is first held to the real service's wire format: exactly event_type, resource.{amount,
 * currency, reference}, state and signature, the signature passing the Utrust library's own validator
 * and the every-field scheme of other languages' validators; its facts are then read from the event
 * log through the `Tessera-Event-Id` header.
 */
export async function cryptoHooks(
  h: Harness,
  store: TestStore,
  receiver: WebhookReceiver,
  of: { orderId?: string; paymentId?: string; refunds?: true },
  count: number,
): Promise<CryptoHook[]> {
  const matches = (r: ReceivedRequest) =>
    (of.orderId === undefined || r.headers['tessera-order-id'] === of.orderId) &&
    (of.paymentId === undefined || r.headers['tessera-payment-id'] === of.paymentId) &&
    (of.refunds === undefined || r.headers['tessera-refund-id'] !== undefined);
  await receiver.waitFor(count, matches);
  const validator = WebhookValidator(store.webhookSecret);
  const hooks: CryptoHook[] = [];
  for (const delivery of receiver.received.filter(matches)) {
    const body = verifyCryptoWebhook<Event & { resource: Record<string, string> }>(
      delivery.body,
      store.webhookSecret,
    );
    if (!validator.validateSignature(body)) throw new Error(`Utrust validator refused ${delivery.body}`);
    if (JSON.stringify(Object.keys(body)) !== '["event_type","resource","signature","state"]')
      throw new Error(`extra webhook fields: ${delivery.body}`);
    if (JSON.stringify(Object.keys(body.resource)) !== '["amount","currency","reference"]')
      throw new Error(`extra resource fields: ${delivery.body}`);
    const logged = await h.request<{ data: { attributes: { type: string; payload: CryptoHook } } }>(
      'GET',
      `/crypto/api/stores/events/${String(delivery.headers['tessera-event-id'])}`,
      { headers: store.auth },
    );
    if (logged.status !== 200) throw new Error(`event not in the log: ${logged.text}`);
    const payload = logged.body.data.attributes.payload;
    if (payload.event_type !== body.event_type || payload.resource.amount !== body.resource.amount)
      throw new Error(`the log and the delivery disagree: ${delivery.body}`);
    hooks.push(payload);
  }
  return hooks;
}
