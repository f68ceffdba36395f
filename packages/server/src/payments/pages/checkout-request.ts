// The hosted checkout's request, as the real service's SDK and shop plugins post it: `jsonRequest`, the
// base64 of an order's JSON text, and `checksum`, the base64 HMAC-SHA512 of that exact text under the
// site's secret key. The JSON names its site (`siteId`, a number or a numeric string), so the key to
// check it with is that site's (the newest, or the previous one during a rotation's overlap). Nothing
// in it is trusted before the checksum matches.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { DomainError, validationFailed } from '../../platform/errors/domain-error.ts';
import { parseClientJson } from '../../platform/http/client-json.ts';
import { ClientAmount, optionalAmount, parseAmount } from '../../platform/money/amount.ts';
import { knownAsset } from '../../platform/money/assets.ts';
import type { OrderTermsCommand } from '../orders/order-types.ts';

const text = (max: number) => z.string().trim().max(max);

// The form's JSON is read as the real service reads it, and as shop plugins write it (the WooCommerce
// plugin sends `customer.identifier` as the shop's numeric id and every field it has no value for as ""):
// a number where text is expected is its decimal string, and an empty (or null) field is absent.
const asText = (value: unknown) =>
  typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
const isBlank = (value: unknown) => value === null || (typeof value === 'string' && value.trim() === '');
/** A field that may be left out, or sent empty. */
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (isBlank(value) ? undefined : value), schema.optional());
/** Text, also when sent as a number. */
const textual = (max: number) => z.preprocess(asText, text(max));

const numeric = z.union([
  z.number(),
  z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?$/, 'must be a number'),
]);
const wholeNumber = z
  .union([z.number().int().positive(), z.string().regex(/^[1-9]\d{0,9}$/)])
  .transform(Number);

/** What Tessera reads of the order JSON; other members (language, items, tags, …) are accepted and ignored. */
const checkoutJson = z.object({
  siteId: wholeNumber,
  customer: z.object({
    identifier: textual(92).pipe(z.string().min(1)),
    firstName: optional(textual(100)),
    lastName: optional(textual(100)),
    country: optional(textual(2)),
    state: optional(textual(100)),
    city: optional(textual(100)),
    address: optional(textual(255)),
    zipCode: optional(textual(20)),
    phone: optional(textual(40)),
    email: optional(z.email().max(254)),
  }),
  order: z.object({
    orderId: textual(255).pipe(z.string().min(1)),
    type: optional(z.enum(['purchase', 'recurring', 'managed'])).transform((t) => t ?? 'purchase'),
    amount: numeric.transform(String),
    currency: z.string().trim().length(3).toUpperCase(),
    description: optional(textual(1000)),
    intervalType: optional(z.enum(['day', 'month'])),
    intervalValue: optional(wholeNumber),
    retryPayment: optional(textual(100)),
    trialAmount: optional(numeric.transform(String)),
    firstBillDate: optional(textual(40)),
  }),
  cardTransactionMode: optional(z.enum(['auth', 'authAndCapture', 'verifyCard'])).transform(
    (m) => m ?? 'authAndCapture',
  ),
  saveCard: optional(
    z.union([z.boolean(), z.literal(0), z.literal(1), z.literal('0'), z.literal('1')]),
  ).transform((v) => v === true || v === 1 || v === '1'),
  /** Pay with this saved card of the customer (the form asks only to confirm) */
  cardId: optional(wholeNumber),
  backUrl: z.url({ protocol: /^https?$/ }).max(2000),
  invoiceEmail: optional(z.email().max(254)),
  /** The card page's language (en, ro; others fall back to the browser's) */
  language: optional(z.string().max(10)),
  customData: optional(z.union([z.string().max(10_000), z.record(z.string(), z.unknown())])).transform((v) =>
    v === undefined || typeof v === 'string' ? v : JSON.stringify(v),
  ),
});

export type CheckoutJson = z.output<typeof checkoutJson>;

export interface CheckoutRequest {
  /** The form's fields, carried unchanged to the card page's form */
  jsonRequest: string;
  checksum: string;
  siteId: number;
  merchantId: number;
  order: CheckoutJson;
  /** The order it asks for, as the orders service's terms (without its customer and card) */
  terms: OrderTermsCommand;
  /**
   * A card save: a card-verification mode, or the exact order the SDK's initializeCardSave builds (an
   * authorization of 0.10 EUR with saveCard). Its authorization is voided once approved.
   */
  cardVerification: boolean;
}

export type ChecksumKeys = (siteId: number) => Promise<{ merchantId: number; keys: string[] } | undefined>;

const MAX_JSON_REQUEST = 64 * 1024;

/** Decodes and verifies a posted checkout form; a clear DomainError names what is wrong. */
export async function openCheckoutRequest(
  form: { jsonRequest?: unknown; checksum?: unknown },
  keysOf: ChecksumKeys,
): Promise<CheckoutRequest> {
  const { jsonRequest, checksum } = form;
  if (typeof jsonRequest !== 'string' || jsonRequest === '' || jsonRequest.length > MAX_JSON_REQUEST) {
    throw validationFailed('jsonRequest', 'jsonRequest is missing: post the base64 of the order JSON');
  }
  if (typeof checksum !== 'string' || !/^[A-Za-z0-9+/]{86}==$/.test(checksum)) {
    throw validationFailed('checksum', 'checksum is missing or is not a base64 HMAC-SHA512');
  }
  const jsonText = Buffer.from(jsonRequest, 'base64').toString('utf8');
  let raw: unknown;
  try {
    raw = parseClientJson(jsonText, 'jsonRequest');
  } catch (err) {
    if (err instanceof DomainError) throw err;
    throw validationFailed('jsonRequest', 'jsonRequest is not the base64 of a JSON document');
  }
  const siteId = wholeNumber.safeParse((raw as { siteId?: unknown } | null)?.siteId);
  const site = siteId.success ? await keysOf(siteId.data) : undefined;
  if (!site) throw validationFailed('siteId', 'siteId does not name a site');
  const given = Buffer.from(checksum, 'base64');
  const matches = site.keys.some((key) =>
    timingSafeEqual(createHmac('sha512', key).update(jsonText, 'utf8').digest(), given),
  );
  if (!matches) {
    throw new DomainError(
      'unauthenticated',
      'the checksum does not match: sign the exact JSON with the site’s secret key',
      {
        field: 'checksum',
      },
    );
  }
  const parsed = checkoutJson.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') ?? 'jsonRequest';
    throw validationFailed(field, `${field}: ${issue?.message ?? 'invalid'}`);
  }
  const order = parsed.data;
  const cardVerification =
    order.cardTransactionMode === 'verifyCard' ||
    (order.saveCard &&
      order.cardTransactionMode === 'auth' &&
      order.order.type === 'purchase' &&
      order.order.currency === 'EUR' &&
      isTenEuroCents(order.order.amount));
  return {
    jsonRequest,
    checksum,
    siteId: order.siteId,
    merchantId: site.merchantId,
    order,
    terms: orderTermsOf(order, cardVerification),
    cardVerification,
  };
}

function orderTermsOf(request: CheckoutJson, cardVerification: boolean): OrderTermsCommand {
  const { order } = request;
  return {
    siteId: request.siteId,
    amount: ClientAmount.read(order.amount, 'amount'),
    currency: order.currency,
    orderType: order.type,
    description: order.description,
    externalOrderId: order.orderId,
    intervalType: order.intervalType,
    intervalValue: order.intervalValue,
    retryPayment: order.retryPayment,
    trialAmount: optionalAmount(order.trialAmount, 'trialAmount'),
    firstBillDate:
      order.firstBillDate === undefined ? undefined : dateOf(order.firstBillDate, 'firstBillDate'),
    backUrl: request.backUrl,
    cardTransactionMode: request.cardTransactionMode === 'verifyCard' ? 'auth' : request.cardTransactionMode,
    saveCard: request.saveCard || cardVerification,
    invoiceEmail: request.invoiceEmail,
    externalCustomData: request.customData,
    cardVerification,
  };
}

/** The SDK's card-save order is for exactly 0.10 EUR; compared in minor units, never as a float. */
function isTenEuroCents(text: string): boolean {
  try {
    return parseAmount(text, knownAsset('EUR')) === 10n;
  } catch {
    return false; // not an amount EUR can hold: not the card-save order (its terms refuse it later)
  }
}

/** A date the shop wrote (WooCommerce sends `2026-12-31`, the SDKs an ISO 8601 time); anything else is named. */
function dateOf(text: string, field: string): Date {
  const date = new Date(text);
  if (Number.isNaN(date.getTime()))
    throw validationFailed(field, `${field} must be a date such as 2026-12-31`);
  return date;
}
