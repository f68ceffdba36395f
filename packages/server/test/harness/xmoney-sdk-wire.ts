// The requests xMoney's Node SDK (api-sdk 0.4.x, public source; not on npm) makes, reproduced as wire
// facts from its source — not its code — with only the host changed: the API base (api-stage.xmoney.com)
// becomes Tessera's payments base path and the checkout host (secure-stage.xmoney.com) Tessera's root.
//
// Facts used here:
// - configured with `secretKey` `sk_<test|live>_<key>` and `publicKey` `pk_<test|live>_<siteId>`; the
//   part after the prefix is used as is (a string) for all of the below;
// - API calls go through axios 1.x with `Authorization: Bearer <key>`; `getSessionToken` is
//   `GET auth/session-token`, `getCards` `GET card?customerId=<id>&hasToken=yes`, `deleteCard`
//   `DELETE card/<id>`, `getOrder` `GET order?page=0&perPage=1&externalOrderId=<id>`, and
//   `initializeCheckoutWithSavedCard` `POST order` with the qs-encoded fields in a form body, retried once
//   with `transactionOption={"isSoftDecline":"yes"}` when the answer's `error[]` has code 839;
// - the checkout order is `{siteId: <pk's siteId>, ...input}` (the input keeps its publicKey), with
//   `saveCard: false` appended when unset; a card save is `{siteId, cardTransactionMode: 'auth', saveCard:
//   true, ...input, order: {...input.order, type: 'purchase', amount: 0.1, currency: 'EUR'}}`;
//   `jsonRequest` is base64 of JSON.stringify(order) and `checksum` base64 HMAC-SHA512 of the same text;
// - `decryptOrderResponse` splits `base64(iv),base64(ciphertext)` and deciphers AES-256-CBC with the key.
import { createDecipheriv, createHmac } from 'node:crypto';

const AXIOS_HEADERS = {
  accept: 'application/json, text/plain, */*',
  'user-agent': 'axios/1.8.4',
  'accept-encoding': 'gzip, compress, deflate, br',
};

export interface SdkConfig {
  secretKey: string;
  publicKey: string;
  /** Tessera's payments base URL (in place of https://api-stage.xmoney.com) */
  apiBase: string;
  /** Tessera's checkout host (in place of https://secure-stage.xmoney.com) */
  checkoutHost: string;
}

export const keyOf = (secretKey: string) => /^sk_(?:test|live)_(.+)$/.exec(secretKey)?.[1] ?? secretKey;
const siteOf = (publicKey: string) => {
  const site = /^pk_(?:test|live)_(.+)$/.exec(publicKey)?.[1];
  if (!site) throw new Error('Invalid public key format. Expected format: pk_<env>_key');
  return site;
};

export interface CheckoutInput {
  publicKey: string;
  cardTransactionMode?: string;
  invoiceEmail?: string;
  saveCard?: boolean;
  cardId?: number;
  backUrl: string;
  customData?: string;
  customer: Record<string, unknown> & { identifier: string };
  order: Record<string, unknown> & { orderId: string };
}

export interface SignedCheckout {
  /** The exact JSON text signed */
  json: string;
  payload: string;
  checksum: string;
}

function sign(order: Record<string, unknown>, secretKey: string): SignedCheckout {
  const json = JSON.stringify(order);
  return {
    json,
    payload: Buffer.from(json, 'utf8').toString('base64'),
    checksum: createHmac('sha512', keyOf(secretKey)).update(json).digest('base64'),
  };
}

/** initializeCheckout (and what initializeHostedCheckout and getWebviewCheckoutHtml embed). */
export function initializeCheckout(config: SdkConfig, input: CheckoutInput): SignedCheckout {
  const order: Record<string, unknown> = { siteId: siteOf(input.publicKey), ...input };
  if (!order.saveCard) order.saveCard = false;
  return sign(order, config.secretKey);
}

/** initializeCardSave. */
export function initializeCardSave(
  config: SdkConfig,
  input: Omit<CheckoutInput, 'cardTransactionMode' | 'saveCard'>,
): SignedCheckout {
  return sign(
    {
      siteId: siteOf(input.publicKey),
      cardTransactionMode: 'auth',
      saveCard: true,
      ...input,
      order: { ...input.order, type: 'purchase', amount: 0.1, currency: 'EUR' },
    },
    config.secretKey,
  );
}

/** The page initializeHostedCheckout returns: a form posted by script to the checkout host's root. */
export function hostedCheckoutPage(config: SdkConfig, signed: SignedCheckout): string {
  return `<!doctype html><html><body>
<form id="checkoutForm" name="checkoutForm" action="${config.checkoutHost}" method="post" accept-charset="UTF-8">
<input type="hidden" name="jsonRequest" value="${signed.payload}">
<input type="hidden" name="checksum" value="${signed.checksum}">
<input type="submit" style="visibility:hidden">
</form>
<script>window.onload = function () { window.setTimeout(function () { document.checkoutForm.submit(); }, 200); };</script>
</body></html>`;
}

/**
 * The page getWebviewCheckoutHtml returns: the checkout host's /sdk/0.0.9/xmoney.js, a container, and one
 * `new XMoneyPaymentForm({...})` with the SDK's options (strings interpolated as it does, so an absent
 * session token or user id arrives as "undefined"). `extraHead` is the integrator's own code (the SDK's page
 * calls a `setTransactionResult` it leaves to them).
 */
export function webviewCheckoutPage(
  config: SdkConfig,
  signed: SignedCheckout,
  options: { theme: 'dark' | 'light'; sessionToken?: string; userId?: number; extraHead?: string },
): string {
  return `<!doctype html><html lang="en"><head><meta charset="UTF-8"><title>Payment</title>
<script src="${config.checkoutHost}/sdk/0.0.9/xmoney.js"></script>${options.extraHead ?? ''}</head>
<body>
<div class="payment-form-container">
<div id="loading-overlay">Loading payment form...</div>
<div id="payment-form-widget" style="opacity: 0"></div>
</div>
<script>
var paymentFormInstance = null;
window.addEventListener('DOMContentLoaded', function () {
  paymentFormInstance = new window.XMoneyPaymentForm({
    container: 'payment-form-widget',
    elementsOptions: { appearance: { theme: '${options.theme}' } },
    options: { enableBackgroundRefresh: true, displayCardHolderName: true },
    checksum: '${signed.checksum}',
    payload: '${signed.payload}',
    publicKey: '${config.publicKey}',
    sessionToken: '${options.sessionToken}',
    userId: '${options.userId}',
    onError: function (err) { console.log('payment error', JSON.stringify(err)); },
    onReady: function () {
      document.getElementById('loading-overlay').style.display = 'none';
      document.getElementById('payment-form-widget').style.opacity = '1';
    },
    onPaymentComplete: function (result) { setTransactionResult(result); }
  });
});
window.addEventListener('beforeunload', function () { paymentFormInstance && paymentFormInstance.destroy && paymentFormInstance.destroy(); });
</script>
</body></html>`;
}

/** decryptOrderResponse. */
export function decryptOrderResponse<T = Record<string, unknown>>(config: SdkConfig, encrypted: string): T {
  const [iv = '', data = ''] = encrypted.split(',', 2);
  const decipher = createDecipheriv('aes-256-cbc', keyOf(config.secretKey), Buffer.from(iv, 'base64'));
  return JSON.parse(
    Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString(),
  ) as T;
}

export interface SdkAnswer<T = unknown> {
  status: number;
  body: { code: number; message: string; data?: T; error?: { code: number; message: string }[] };
}

/** One API call exactly as the SDK's axios sends it: method, path and query, headers, body bytes. */
export async function sdkRequest<T = unknown>(
  config: SdkConfig,
  method: 'GET' | 'POST' | 'DELETE',
  pathAndQuery: string,
  formBody?: string,
): Promise<SdkAnswer<T>> {
  const response = await fetch(`${config.apiBase}/${pathAndQuery}`, {
    method,
    headers: {
      ...AXIOS_HEADERS,
      authorization: `Bearer ${keyOf(config.secretKey)}`,
      ...(formBody !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
    },
    ...(formBody !== undefined ? { body: formBody } : {}),
  });
  return { status: response.status, body: (await response.json()) as SdkAnswer<T>['body'] };
}

/**
 * A form body as `qs.stringify` writes the SDK's saved-card order: keys in the object's order, values
 * percent-encoded (RFC 3986; JSON text such as transactionOption included).
 */
export function qsForm(fields: Record<string, string | number>): string {
  return Object.entries(fields)
    .map(([k, v]) => `${encodeRfc3986(k)}=${encodeRfc3986(String(v))}`)
    .join('&');
}
const encodeRfc3986 = (s: string) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
