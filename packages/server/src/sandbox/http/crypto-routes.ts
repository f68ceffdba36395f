// /sandbox/crypto/… and /sandbox/fx/…: the simulated chain and FX market around the crypto API
// (the sandbox: README). Payments made here are real transfers on the chain simulator and flow
// through the same deposit, confirmation, ledger and webhook code as any other.
import { z } from 'zod';
import { standardErrors } from '../../admin/http/schemas.ts';
import type { OrdersService } from '../../crypto/orders/orders-service.ts';
import { assetOf } from '../../crypto/quotes/quotes-service.ts';
import type { RefundsService } from '../../crypto/refunds/refunds-service.ts';
import type { Db } from '../../platform/db/database.ts';
import type { Transact } from '../../platform/db/transact.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { formatAmountIn, parseAmountField } from '../../platform/money/amount.ts';
import { findNetwork } from '../../platform/money/assets.ts';
import { formatRate, parseRate } from '../../platform/money/rates.ts';
import { isWellFormedAddress } from '../../rails/chain/port.ts';
import { type ChainSandbox, type FxSandbox, simulatedAddress } from '../../rails/sandbox.ts';

const upper = z
  .string()
  .trim()
  .min(2)
  .max(10)
  .transform((c) => c.toUpperCase());

export async function registerCryptoSandboxRoutes(
  app: ZodApp,
  deps: {
    db: Db;
    transact: Transact;
    orders: OrdersService;
    refunds: RefundsService;
    chain: ChainSandbox;
    fx: FxSandbox;
  },
): Promise<void> {
  app.post(
    '/crypto/orders/:id/pay',
    {
      schema: {
        summary: 'The buyer pays an order on chain: exactly what is due (amount omitted), less, or more',
        description:
          "currency/network pick the payment option as the hosted page would (a fresh 60-second quote). amount is in the crypto currency. offramp marks the transfer as sent by an offramp provider (not refundable). sender is the paying address (a fresh one of the network's shape when omitted); one OFAC lists raises a compliance alert and holds the store's payouts. Confirmations then accrue with the sandbox clock, per network.",
        tags: ['crypto'],
        params: z.object({ id: z.uuid() }),
        body: z
          .object({
            currency: upper,
            network: upper,
            amount: z.union([z.string().max(60), z.number()]).optional(),
            offramp: z.boolean().optional(),
            sender: z.string().trim().min(1).max(100).optional(),
          })
          // Exactly what is due, in an asset the sandbox chain carries.
          .meta({ example: { currency: 'USDC', network: 'ETH' } }),
        response: {
          201: z.object({
            transactionHash: z.string(),
            address: z.string(),
            amount: z.string(),
            confirmsAt: z.string(),
          }),
          ...standardErrors,
        },
      },
    },
    async (request, reply) => {
      const { currency, network, offramp, sender } = request.body;
      if (!findNetwork(currency, network))
        throw new DomainError('validation_failed', `${currency} on ${network} is not a supported pair`, {
          field: 'network',
        });
      if (sender !== undefined && !isWellFormedAddress(network, sender))
        throw new DomainError('validation_failed', `not a ${network} address`, { field: 'sender' });
      const asset = assetOf(currency);
      const target = await deps.orders.paymentTarget(request.params.id, { asset: currency, network });
      const amount =
        request.body.amount === undefined
          ? target.cryptoDue
          : parseAmountField(request.body.amount, asset, 'amount');
      if (amount <= 0n)
        throw new DomainError('validation_failed', 'nothing is due: give an amount', { field: 'amount' });
      const transfer = await deps.transact((tx) =>
        deps.chain.pay(tx, { address: target.address, amount, offramp: offramp ?? false, sender }),
      );
      return reply.code(201).send({
        transactionHash: transfer.id,
        address: transfer.address,
        amount: formatAmountIn(transfer.amount, currency),
        confirmsAt: transfer.confirmsAt.toISOString(),
      });
    },
  );

  app.post(
    '/crypto/transfers/:transactionHash/reorg',
    {
      schema: {
        summary: 'A reorg drops the block holding an unconfirmed transfer to a deposit address',
        description:
          'The transfer becomes `reverted`: its order owes it again and the store gets ORDER.PAYMENT.REVERTED. With reinclude, a new block holds it again at once (ORDER.PAYMENT.DETECTED again; confirmations start afresh). A confirmed transfer is final (409). Simulated chains only: a real chain reorgs by itself.',
        tags: ['crypto'],
        params: z.object({ transactionHash: z.string().trim().min(1).max(100) }),
        body: z.object({ reinclude: z.boolean().optional() }).nullish(),
        response: {
          200: z.object({ transactionHash: z.string(), status: z.enum(['pending', 'reverted']) }),
          ...standardErrors,
        },
      },
    },
    async (request) => {
      const transfer = await deps.transact((tx) =>
        deps.chain.reorg(tx, {
          transactionHash: request.params.transactionHash,
          reinclude: request.body?.reinclude ?? false,
        }),
      );
      return {
        transactionHash: transfer.id,
        status: transfer.status === 'reverted' ? ('reverted' as const) : ('pending' as const),
      };
    },
  );

  const refundView = z.object({
    refundId: z.string(),
    status: z.string(),
    refundAddress: z.string().nullable(),
  });
  app.post(
    '/crypto/refunds/:paymentId/accept',
    {
      schema: {
        summary: 'The buyer accepts the payment’s refund proposal (address: a sandbox one when omitted)',
        tags: ['crypto'],
        params: z.object({ paymentId: z.uuid() }),
        body: z
          .object({ address: z.string().trim().max(200).optional() })
          .nullish()
          .meta({ example: { address: '0x52908400098527886E0F7030069857D2E4169EE7' } }),
        response: { 200: refundView, ...standardErrors },
      },
    },
    async (request) => {
      const { paymentId } = request.params;
      const address = request.body?.address ?? simulatedAddress(await deps.refunds.paymentNetwork(paymentId));
      const refund = await deps.refunds.accept({ paymentId }, address);
      return { refundId: refund.id, status: refund.status, refundAddress: refund.refundAddress };
    },
  );
  app.post(
    '/crypto/refunds/:paymentId/reject',
    {
      schema: {
        summary: 'The buyer rejects the payment’s refund proposal',
        tags: ['crypto'],
        params: z.object({ paymentId: z.uuid() }),
        response: { 200: refundView, ...standardErrors },
      },
    },
    async (request) => {
      const refund = await deps.refunds.reject({ paymentId: request.params.paymentId });
      return { refundId: refund.id, status: refund.status, refundAddress: refund.refundAddress };
    },
  );

  app.post(
    '/fx/rates',
    {
      schema: {
        summary: 'Pin the rate of a pair (units of to per one from), or float it again with rate null',
        description: 'Unpinned rates follow the simulator’s deterministic movement on the sandbox clock.',
        tags: ['fx'],
        body: z.object({ from: upper, to: upper, rate: z.string().max(60).nullable() }),
        response: {
          200: z.object({ from: z.string(), to: z.string(), rate: z.string() }),
          ...standardErrors,
        },
      },
    },
    async (request) => {
      const { from, to } = request.body;
      for (const [field, c] of [
        ['from', from],
        ['to', to],
      ] as const) {
        if (!deps.fx.supports(c))
          throw new DomainError('validation_failed', `the FX simulator does not price ${c}`, { field });
      }
      let rate: bigint | null = null;
      if (request.body.rate !== null) {
        rate = parseRate(request.body.rate) ?? null;
        if (rate === null)
          throw new DomainError('validation_failed', 'rate must be a positive decimal', { field: 'rate' });
      }
      await deps.fx.pin(deps.db, from, to, rate);
      return { from, to, rate: formatRate(await deps.fx.rate(deps.db, from, to)) };
    },
  );
}
