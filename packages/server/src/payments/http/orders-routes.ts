// /order and /order-rebill (spec, Orders; docs/wire-compatibility.md for list filters and the cancel and rebill bodies).

import { z } from 'zod';
import type { Clock } from '../../platform/clock/clock.ts';
import { PAYMENTS_ORDER_STATUSES as ORDER_STATUSES } from '../../platform/db/schema.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { httpUrl, text } from '../../platform/http/fields.ts';
import { ClientAmount, optionalAmount } from '../../platform/money/amount.ts';
import type { WalletPaymentTokens } from '../../rails/wallet-tokenization/payment-tokens.ts';
import type { ChargeResult, CreateOrderCommand, PaymentOrdersService } from '../orders/orders-service.ts';
import { type MerchantAuthenticator, merchantOf } from './authenticate.ts';
import {
  created,
  envelope,
  errorEnvelope,
  ok,
  paged,
  pagedEnvelope,
  pageOf,
  standardErrors,
} from './envelope.ts';
import {
  countryField,
  currencyField,
  decimalField,
  flagField,
  intField,
  isoDateTime,
  jsonMember,
  jsonText,
  pageQuery,
} from './fields.ts';
import { type InstrumentReading, readInstrument } from './instrument-fields.ts';
import { orderView, presentOrder } from './views.ts';

const ORDER_TYPES = ['purchase', 'recurring', 'managed', 'credit'] as const;
const REASONS = [
  'fraud-confirm',
  'highly-suspicious',
  'duplicated-transaction',
  'customer-demand',
  'test-transaction',
] as const;
const yesNo = z.enum(['yes', 'no']);

const transactionOption = jsonMember(
  z.object({
    digitalWallet: z
      .object({ walletType: z.enum(['googlePay', 'applePay']), data: z.string().min(1).max(20_000) })
      .optional(),
    isSoftDecline: yesNo.optional(),
    subMerchantId: text(100).optional(),
    splitPayment: z
      .object({
        splitSchema: z
          .array(
            z.object({
              toSite: intField,
              amount: decimalField,
              description: text(255).optional(),
              tag: z.array(text(50)).max(20).optional(),
            }),
          )
          .min(1)
          .max(20),
      })
      .optional(),
  }),
);

const createBody = z.object({
  amount: decimalField,
  currency: currencyField,
  orderType: z.enum(ORDER_TYPES),
  customerId: intField,
  siteId: intField.optional(),
  description: text(1000).optional(),
  externalOrderId: text(255).optional(),
  intervalType: z.enum(['day', 'month']).optional(),
  intervalValue: intField.optional(),
  retryPayment: text(500).optional(),
  trialAmount: decimalField.optional(),
  firstBillDate: isoDateTime.optional(),
  backUrl: httpUrl.optional(),
  transactionMethod: z.enum(['card', 'wallet']).optional(),
  cardTransactionMode: z.enum(['auth', 'authAndCapture', 'credit']).optional(),
  walletTransactionMode: z.enum(['transfer', 'credit']).optional(),
  cardId: intField.optional(),
  cardNumber: z
    .string()
    .trim()
    .regex(/^\d{12,19}$/, 'cardNumber is 12 to 19 digits, no spaces')
    .optional(),
  cardExpiryDate: z.string().trim().max(7).optional(),
  cardCvv: z.string().trim().max(4).optional(),
  cardHolderName: text(100).optional(),
  cardHolderCountry: countryField.optional(),
  cardHolderState: z
    .string()
    .trim()
    .regex(/^[A-Za-z]{2}$/, 'two-letter ISO 3166-2 code')
    .optional(),
  saveCard: flagField.optional(),
  invoiceEmail: z.email().max(254).optional(),
  ip: z.union([z.ipv4(), z.ipv6()]).optional(),
  threeDSecureData: z.string().max(20_000).optional(),
  externalCustomData: z.string().max(10_000).optional(),
  level3Data: z.string().max(50_000).optional(),
  transactionOption: transactionOption.optional(),
  digitalWalletType: z.enum(['googlePay', 'applePay']).optional(),
  digitalWalletCryptogram: text(200).optional(),
  digitalWalletEci: text(4).optional(),
  digitalWalletRawData: z.string().max(20_000).optional(),
  digitalWalletProtocolVersion: text(20).optional(),
  networkTokenType: z.enum(['MDES', 'VTS', 'APPLE', 'GOOGLE', 'SAMSUNG']).optional(),
  networkToken: z.string().trim().max(40).optional(),
  networkTokenCryptogram: text(200).optional(),
  networkTokenEci: text(4).optional(),
  networkTransactionId: text(100).optional(),
  networkTransactionDate: z
    .string()
    .regex(/^\d{10,14}$/, 'a Unix timestamp in milliseconds')
    .optional(),
  eci: text(4).optional(),
  cavv: text(200).optional(),
  xid: text(200).optional(),
  threeDSProtocolVersion: text(20).optional(),
  threeDsType: text(50).optional(),
});

const createdView = z.object({
  orderId: z.number().int(),
  transactionId: z.number().int(),
  cardId: z.number().int().optional(),
  is3d: z.number().int(),
  isRedirect: z.boolean(),
  redirect: z
    .object({
      url: z.string(),
      formMethod: z.enum(['POST', 'GET']),
      params: z.record(z.string(), z.string()),
    })
    .optional(),
  orderStatus: z.string(),
  transactionStatus: z.string(),
});

export function presentCharge(r: ChargeResult) {
  return {
    orderId: r.order.id,
    transactionId: r.transaction.id,
    ...(r.cardId !== null ? { cardId: r.cardId } : {}),
    is3d: r.transaction.is_3d ? 1 : 0,
    isRedirect: r.redirect !== undefined,
    ...(r.redirect ? { redirect: r.redirect } : {}),
    orderStatus: r.order.status,
    transactionStatus: r.transaction.status,
  };
}

/** The body as the service's command: amounts exact, JSON members checked, the card read once. */
function createCommand(body: z.output<typeof createBody>, reading: InstrumentReading): CreateOrderCommand {
  const { transactionOption: option, amount, trialAmount, level3Data } = body;
  const splitSchema = option?.splitPayment?.splitSchema.map((entry, i) => ({
    toSite: entry.toSite,
    amount: ClientAmount.read(entry.amount, `transactionOption.splitPayment.splitSchema.${i}.amount`),
    description: entry.description,
  }));
  return {
    amount: ClientAmount.read(amount, 'amount'),
    currency: body.currency,
    orderType: body.orderType,
    customerId: body.customerId,
    siteId: body.siteId,
    description: body.description,
    externalOrderId: body.externalOrderId,
    intervalType: body.intervalType,
    intervalValue: body.intervalValue,
    retryPayment: body.retryPayment,
    trialAmount: optionalAmount(trialAmount, 'trialAmount'),
    firstBillDate: body.firstBillDate === undefined ? undefined : new Date(body.firstBillDate),
    backUrl: body.backUrl,
    transactionMethod: body.transactionMethod,
    cardTransactionMode: body.cardTransactionMode,
    saveCard: body.saveCard,
    invoiceEmail: body.invoiceEmail,
    ip: body.ip,
    externalCustomData: body.externalCustomData,
    ...(level3Data !== undefined ? { level3Data: jsonText(level3Data, 'level3Data') } : {}),
    isSoftDecline: option?.isSoftDecline === 'yes',
    splitSchema,
    // The card fields are read here and go no further than the instrument.
    instrument: readInstrument({ ...body, digitalWallet: option?.digitalWallet }, reading),
  };
}

export async function registerOrdersRoutes(
  app: ZodApp,
  deps: {
    orders: PaymentOrdersService;
    authenticate: MerchantAuthenticator;
    walletTokens: WalletPaymentTokens;
    clock: Clock;
  },
): Promise<void> {
  const { orders } = deps;
  const common = { onRequest: deps.authenticate };
  const idParam = z.object({ id: intField });

  app.post(
    '/order',
    {
      ...common,
      schema: {
        summary:
          'Create an order and charge it (402 when the payment fails; 403 while the merchant’s onboarding is required and not approved)',
        tags: ['orders'],
        body: createBody,
        response: {
          201: envelope(createdView),
          402: errorEnvelope,
          403: errorEnvelope.describe(
            'TESSERA_ONBOARDING_REQUIRED=charges and the business profile not approved',
          ),
          ...standardErrors,
        },
      },
    },
    async (request, reply) => {
      const result = await orders.create(
        merchantOf(request),
        createCommand(request.body, { walletTokens: deps.walletTokens, now: deps.clock.now() }),
      );
      return reply.code(201).send(created(presentCharge(result)));
    },
  );

  app.get(
    '/order',
    {
      ...common,
      schema: {
        summary: 'List orders',
        tags: ['orders'],
        querystring: z.object({
          externalOrderId: z.string().max(255).optional(),
          customerId: intField.optional(),
          orderType: z.enum(ORDER_TYPES).optional(),
          orderStatus: z.enum(ORDER_STATUSES).optional(),
          createdAtFrom: isoDateTime.optional(),
          createdAtTo: isoDateTime.optional(),
          ...pageQuery,
        }),
        response: { 200: pagedEnvelope(orderView), ...standardErrors },
      },
    },
    async (request) => {
      const q = request.query;
      const page = pageOf(q);
      const { items, total } = await orders.list(
        merchantOf(request),
        {
          ...(q.externalOrderId !== undefined ? { externalOrderId: q.externalOrderId } : {}),
          ...(q.customerId !== undefined ? { customerId: q.customerId } : {}),
          ...(q.orderType ? { orderType: q.orderType } : {}),
          ...(q.orderStatus ? { orderStatus: q.orderStatus } : {}),
          ...(q.createdAtFrom ? { createdAtFrom: new Date(q.createdAtFrom) } : {}),
          ...(q.createdAtTo ? { createdAtTo: new Date(q.createdAtTo) } : {}),
        },
        page,
      );
      return paged(items.map(presentOrder), total, page);
    },
  );

  app.get(
    '/order/:id',
    {
      ...common,
      schema: {
        summary: 'Retrieve an order',
        tags: ['orders'],
        params: idParam,
        response: { 200: envelope(orderView), ...standardErrors },
      },
    },
    async (request) => ok(presentOrder(await orders.get(merchantOf(request), request.params.id))),
  );

  app.delete(
    '/order/:id',
    {
      ...common,
      schema: {
        summary:
          'Cancel an order without payments; terminateOrder=yes stops a recurring or managed order that has some',
        tags: ['orders'],
        params: idParam,
        body: z
          .object({
            reason: z.enum(REASONS).optional(),
            message: text(500).optional(),
            terminateOrder: yesNo.optional(),
          })
          .nullish(),
        response: { 200: envelope(orderView), ...standardErrors },
      },
    },
    async (request) => {
      const body = request.body ?? {};
      const order = await orders.cancel(merchantOf(request), request.params.id, {
        reason: body.reason,
        message: body.message,
        terminateOrder: body.terminateOrder === 'yes',
      });
      return ok(presentOrder(order));
    },
  );

  app.patch(
    '/order-rebill/:id',
    {
      ...common,
      schema: {
        summary: 'Charge a managed order’s stored card again (402 when the payment fails)',
        tags: ['orders'],
        params: idParam,
        body: z.object({
          customerId: intField,
          amount: decimalField,
          transactionOption: transactionOption.optional(),
        }),
        response: {
          200: envelope(createdView.omit({ orderId: true }).extend({ id: z.number().int() })),
          402: errorEnvelope,
          ...standardErrors,
        },
      },
    },
    async (request) => {
      const result = await orders.rebill(merchantOf(request), request.params.id, {
        customerId: request.body.customerId,
        amount: ClientAmount.read(request.body.amount),
        isSoftDecline: request.body.transactionOption?.isSoftDecline === 'yes',
      });
      const { orderId, ...rest } = presentCharge(result);
      return ok({ id: orderId, ...rest });
    },
  );
}
