// What xMoney's WooCommerce plugin (the WooCommerce repository of xMoney-Payments, public source) posts to
// the hosted checkout, reproduced as wire facts from its source — not its code — with only the checkout
// host changed.
//
// Facts used here:
// - class-main-processor (a purchase) and class-subscription-processor (a WooCommerce Subscriptions
//   order) build a PHP array in this key order: siteId (the plugin's configured site id, a string),
//   customer {identifier, firstName, lastName, country, city, address, zipCode, phone, email}, order
//   {orderId, type, amount, currency, items | intervalType, intervalValue, description[, trialAmount,
//   firstBillDate]}, cardTransactionMode 'authAndCapture', invoiceEmail '' (always empty), backUrl;
// - customer.identifier is the shop's customer id, or the order id for a guest: an integer either way;
//   a billing field the shopper left empty is '' (phone: '' or '+' and its digits); orderId is the
//   sanitized `order_id` query parameter (a string); amounts and totals are WooCommerce's strings
//   ("25.50"); items are {item, units (an integer), unitPrice (a string, two decimals)}; a subscription's
//   intervalValue is WooCommerce's string ("1"), weeks become days and years months, and its description
//   is "<value> <type> subscription <product>"; trialAmount (the sign-up fee, a string) and
//   firstBillDate (the trial's end, "YYYY-MM-DD") are added when there is a sign-up fee;
// - jsonRequest is base64(json_encode(array)) and checksum base64(HMAC-SHA512(json_encode(array), the
//   configured secret key)); PHP's json_encode escapes "/" as "\/" and writes non-ASCII as \uXXXX;
// - the form posts to the checkout host with `?lang=<shop language>`.
import { createHmac } from 'node:crypto';

/** PHP's json_encode with its default flags, for the arrays the plugin builds. */
export function phpJsonEncode(value: unknown): string {
  return JSON.stringify(value)
    .replace(/\//g, '\\/')
    .replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export interface ShopOrder {
  siteId: string;
  orderId: number;
  /** 0 for a guest: the order id is the identifier then */
  customerId: number;
  billing: {
    firstName: string;
    lastName: string;
    country: string;
    city: string;
    address: string;
    postcode: string;
    phone: string;
    email: string;
  };
  currency: string;
  total: string;
  backUrl: string;
}

const customerOf = (o: ShopOrder) => ({
  identifier: o.customerId === 0 ? o.orderId : o.customerId,
  firstName: o.billing.firstName,
  lastName: o.billing.lastName,
  country: o.billing.country,
  city: o.billing.city,
  address: o.billing.address,
  zipCode: o.billing.postcode,
  phone: o.billing.phone ? `+${o.billing.phone.replace(/[^0-9]/g, '')}` : '',
  email: o.billing.email,
});

/** class-main-processor's JSON text. */
export function purchaseJson(
  o: ShopOrder,
  items: { name: string; quantity: number; subtotal: string }[],
): string {
  return phpJsonEncode({
    siteId: o.siteId,
    customer: customerOf(o),
    order: {
      orderId: String(o.orderId),
      type: 'purchase',
      amount: o.total,
      currency: o.currency,
      items: items.map((i) => ({
        item: i.name,
        units: i.quantity,
        unitPrice: (Number(i.subtotal) / i.quantity).toFixed(2),
      })),
    },
    cardTransactionMode: 'authAndCapture',
    invoiceEmail: '',
    backUrl: o.backUrl,
  });
}

/** class-subscription-processor's JSON text. */
export function subscriptionJson(
  o: ShopOrder,
  plan: {
    product: string;
    period: 'day' | 'week' | 'month' | 'year';
    interval: string;
    signUpFee: string;
    trialEnds: string;
  },
): string {
  const [type, value] =
    plan.period === 'week'
      ? ['day', 7 * Number(plan.interval)]
      : plan.period === 'year'
        ? ['month', 12 * Number(plan.interval)]
        : [plan.period, plan.interval];
  const order: Record<string, unknown> = {
    orderId: String(o.orderId),
    type: 'recurring',
    amount: o.total,
    currency: o.currency,
    intervalType: type,
    intervalValue: value,
    description: `${value} ${type} subscription ${plan.product}`,
  };
  if (plan.signUpFee !== '0') {
    order.trialAmount = plan.signUpFee;
    order.firstBillDate = plan.trialEnds;
  }
  return phpJsonEncode({
    siteId: o.siteId,
    customer: customerOf(o),
    order,
    cardTransactionMode: 'authAndCapture',
    invoiceEmail: '',
    backUrl: o.backUrl,
  });
}

/** The plugin's form fields for a JSON text. */
export function pluginForm(json: string, secretKey: string) {
  return {
    jsonRequest: Buffer.from(json, 'utf8').toString('base64'),
    checksum: createHmac('sha512', secretKey).update(json, 'utf8').digest('base64'),
  };
}
