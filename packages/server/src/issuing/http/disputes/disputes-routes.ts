// Cardholder disputes for the partner (x-partner-api-key; docs/issuing.md, Disputes — a Tessera extension):
// open one on a cleared payment of the partner's customer, list a payment's disputes, read one.
import { z } from 'zod';
import type { ZodApp } from '../../../platform/http/api-scope.ts';
import { formatAmountIn, withClientAmount } from '../../../platform/money/amount.ts';
import { DISPUTE_REASONS, type IssuingDispute } from '../../disputes/dispute.ts';
import type { IssuingDisputesService } from '../../disputes/disputes-service.ts';
import { type Authenticators, requirePartner } from '../authenticate.ts';
import { errors } from '../schemas.ts';

export const disputeView = z.object({
  disputeId: z.string(),
  transactionId: z.string(),
  customerId: z.string(),
  status: z.enum(['under_review', 'won', 'lost']),
  reason: z.enum(DISPUTE_REASONS),
  explanation: z.string().nullable(),
  amount: z.string(),
  currency: z.string(),
  provisionalCredit: z.string(),
  unrecoveredAmount: z.string(),
  decideBy: z.iso.datetime(),
  createdAt: z.iso.datetime(),
  decidedAt: z.iso.datetime().nullable(),
});

export const presentDispute = (d: IssuingDispute) => ({
  disputeId: d.disputeId,
  transactionId: d.transactionId,
  customerId: d.customerId,
  status: d.status,
  reason: d.reason as (typeof DISPUTE_REASONS)[number],
  explanation: d.explanation,
  amount: formatAmountIn(d.amount, d.currency),
  currency: d.currency,
  provisionalCredit: formatAmountIn(d.provisionalCredit, d.currency),
  unrecoveredAmount: formatAmountIn(d.unrecoveredAmount, d.currency),
  decideBy: d.decideBy.toISOString(),
  createdAt: d.createdAt.toISOString(),
  decidedAt: d.decidedAt?.toISOString() ?? null,
});

export async function registerDisputesRoutes(
  app: ZodApp,
  disputes: IssuingDisputesService,
  authn: Authenticators,
): Promise<void> {
  const security = [{ partnerApiKey: [] }];
  const transactionParam = z.object({ transactionId: z.string().max(64) });

  app.post(
    '/transactions/:transactionId/disputes',
    {
      onRequest: authn.partnerApiKey,
      schema: {
        summary: 'Dispute a cleared card payment for the customer (Tessera extension)',
        description:
          'amount is at most what is left of the payment to dispute: what was cleared, less refunds and the disputes under review or won (400 naming amount); 409 when nothing is left (not cleared, or already refunded or disputed in full). With provisional credit on (the default), the account is credited at once. The network decides within 10 days; events disputeCreated and disputeStatusChanged.',
        tags: ['disputes'],
        security,
        params: transactionParam,
        body: z.object({
          reason: z.enum(DISPUTE_REASONS),
          amount: z.union([z.string().max(40), z.number()]),
          explanation: z.string().trim().min(1).max(2000).optional(),
        }),
        response: { 201: disputeView, ...errors(400, 401, 404, 409) },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          presentDispute(
            await disputes.open(
              requirePartner(request).id,
              request.params.transactionId,
              withClientAmount(request.body),
            ),
          ),
        ),
  );

  app.get(
    '/transactions/:transactionId/disputes',
    {
      onRequest: authn.partnerApiKey,
      schema: {
        summary: 'The disputes of a payment, oldest first (Tessera extension)',
        tags: ['disputes'],
        security,
        params: transactionParam,
        response: { 200: z.object({ data: z.array(disputeView) }), ...errors(401, 404) },
      },
    },
    async (request) => ({
      data: (await disputes.listForTransaction(requirePartner(request).id, request.params.transactionId)).map(
        presentDispute,
      ),
    }),
  );

  app.get(
    '/disputes/:disputeId',
    {
      onRequest: authn.partnerApiKey,
      schema: {
        summary: 'One dispute (Tessera extension)',
        tags: ['disputes'],
        security,
        params: z.object({ disputeId: z.string().max(64) }),
        response: { 200: disputeView, ...errors(401, 404) },
      },
    },
    async (request) =>
      presentDispute(await disputes.get(requirePartner(request).id, request.params.disputeId)),
  );
}
