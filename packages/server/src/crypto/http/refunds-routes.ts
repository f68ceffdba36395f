// /stores/refund/{payment_id} (the spec's path) and /stores/refunds/{payment_id} (the newer one of the
// real service, docs/wire-compatibility.md): propose a refund, or read the payment's current one.
import { z } from 'zod';
import { DomainError } from '../../platform/errors/domain-error.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { isUuid } from '../../platform/ids.ts';
import { parseAmountField } from '../../platform/money/amount.ts';
import { findAsset } from '../../platform/money/assets.ts';
import type { Refund, RefundsService } from '../refunds/refunds-service.ts';
import { type StoreAuthenticator, storeOf } from './authenticate.ts';
import { decimalText, errors, moneyOf } from './jsonapi.ts';

const refundResource = z.object({
  type: z.literal('refunds'),
  id: z.string(),
  attributes: z.object({
    payment_id: z.string(),
    order_id: z.string(),
    requested_amount: z.string(),
    requested_currency: z.string(),
    crypto_amount: z.object({ currency: z.string(), blockchain: z.string(), value: z.string() }),
    status: z.enum(['proposed', 'accepted', 'rejected', 'complete', 'expired']),
    reason: z.string().nullable(),
    refund_address: z.string().nullable(),
    payout_transaction_hash: z.string().nullable(),
    expires_at: z.string(),
    created_at: z.string(),
    decided_at: z.string().nullable(),
    completed_at: z.string().nullable(),
    decision_url: z.string().optional(),
  }),
});

export function presentRefund(r: Refund, decisionUrl?: string) {
  return {
    type: 'refunds' as const,
    id: r.id,
    attributes: {
      payment_id: r.paymentId,
      order_id: r.orderId,
      requested_amount: moneyOf(r.amount, r.currency).value,
      requested_currency: r.currency,
      crypto_amount: {
        currency: r.asset,
        blockchain: r.network,
        value: moneyOf(r.cryptoAmount, r.asset).value,
      },
      status: r.status,
      reason: r.reason,
      refund_address: r.refundAddress,
      payout_transaction_hash: r.payoutTransactionHash,
      expires_at: r.expiresAt.toISOString(),
      created_at: r.createdAt.toISOString(),
      decided_at: r.decidedAt?.toISOString() ?? null,
      completed_at: r.completedAt?.toISOString() ?? null,
      ...(decisionUrl ? { decision_url: decisionUrl } : {}),
    },
  };
}

const params = z.object({ payment_id: z.string().max(64) });

export async function registerRefundsRoutes(
  app: ZodApp,
  deps: { refunds: RefundsService; authenticate: StoreAuthenticator },
): Promise<void> {
  for (const path of ['/stores/refund/:payment_id', '/stores/refunds/:payment_id']) {
    app.post(
      path,
      {
        onRequest: deps.authenticate,
        schema: {
          summary: 'Propose a refund of a payment; the buyer accepts or rejects it',
          description:
            'Rules: refunds enabled for the store (else 403); one active refund per payment, a new one after a rejection or expiry (409); 0.01 <= amount <= the payment total (400); payments older than 3 months (409) and offramp payments (409) are not refundable. The buyer is emailed a link to the hosted decision page; decision_url, shown only in this answer, is the same link. A proposal not accepted within 30 days expires.',
          tags: ['refunds'],
          params,
          body: z.object({
            data: z.object({
              type: z.literal('refunds').optional(),
              attributes: z.object({ amount: decimalText, reason: z.string().trim().max(500).optional() }),
            }),
          }),
          response: { 201: z.object({ data: refundResource }), ...errors },
        },
      },
      async (request, reply) => {
        const store = storeOf(request);
        if (!isUuid(request.params.payment_id)) throw new DomainError('not_found', 'payment not found');
        const currency = await deps.refunds.paymentCurrency(store, request.params.payment_id);
        const asset = findAsset(currency);
        if (!asset) throw new Error(`unknown asset ${currency}`);
        const amount = parseAmountField(request.body.data.attributes.amount, asset, 'data.attributes.amount');
        const { refund, decisionUrl } = await deps.refunds.propose(store, request.params.payment_id, {
          amount,
          reason: request.body.data.attributes.reason ?? null,
        });
        return reply
          .code(201)
          .type('application/vnd.api+json')
          .send({ data: presentRefund(refund, decisionUrl) });
      },
    );

    app.get(
      path,
      {
        onRequest: deps.authenticate,
        schema: {
          summary: 'The payment’s current refund (the latest proposal), if there is one',
          tags: ['refunds'],
          params,
          response: { 200: z.object({ data: refundResource }), ...errors },
        },
      },
      async (request, reply) => {
        const store = storeOf(request);
        if (!isUuid(request.params.payment_id)) throw new DomainError('not_found', 'refund not found');
        const refund = await deps.refunds.get(store, request.params.payment_id);
        return reply.type('application/vnd.api+json').send({ data: presentRefund(refund) });
      },
    );
  }
}
