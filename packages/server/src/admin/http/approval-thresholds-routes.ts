// The operator sets a merchant's or a store's four-eyes policy (docs/console.md, Approvals): per currency,
// the amount above which a console refund (merchants: stores refund over their API only) or payout needs
// a second person, whether a change of a payout bank account does, and how long a request waits.
// PUT replaces the whole policy; amounts are decimal text in the currency, as everywhere.
import { z } from 'zod';
import {
  type ApprovalPolicy,
  type ApprovalTenant,
  DEFAULT_EXPIRY_SECONDS,
} from '../../platform/approvals/approvals.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { AmountError, formatAmount, parseAmount } from '../../platform/money/amount.ts';
import { findAsset } from '../../platform/money/assets.ts';
import type { AdminDeps } from './admin-deps.ts';
import { idParam, numericIdParam, standardErrors, timestamp } from './schemas.ts';

/** `{EUR: "50.00"}` → `{EUR: 5000n}`: a known currency, a decimal amount of it (0: every amount). */
const thresholds = z
  .record(z.string().regex(/^[A-Z]{3,5}$/, 'a currency code'), z.string().max(40))
  .transform((entries, ctx) => {
    const out: Record<string, bigint> = {};
    for (const [currency, amount] of Object.entries(entries)) {
      const asset = findAsset(currency);
      if (!asset) {
        ctx.addIssue({
          code: 'custom',
          path: [currency],
          message: `${currency} is not a currency Tessera knows`,
        });
        continue;
      }
      try {
        out[currency] = parseAmount(amount, asset, { allowZero: true });
      } catch (err) {
        if (!(err instanceof AmountError)) throw err;
        ctx.addIssue({ code: 'custom', path: [currency], message: err.message });
      }
    }
    return out;
  });

const policyFields = {
  payout: thresholds.optional().describe('currency → payouts above this amount need approval'),
  bankAccountChange: z.boolean().optional().describe('a change of the payout bank account needs approval'),
  expiresAfterHours: z
    .number()
    .int()
    .min(1)
    .max(720)
    .optional()
    .describe('how long a request waits for its second person (default 24)'),
};
const merchantBody = z
  .strictObject({
    refund: thresholds.optional().describe('currency → refunds above this amount need approval'),
    ...policyFields,
  })
  .meta({ example: { refund: { EUR: '50.00' }, payout: { EUR: '1000.00' }, bankAccountChange: true } });
const storeBody = z
  .strictObject(policyFields)
  .meta({ example: { payout: { USDC: '1000' }, bankAccountChange: true, expiresAfterHours: 8 } });

const amounts = z.record(z.string(), z.string());
const policyView = z.object({
  refund: amounts,
  payout: amounts,
  bankAccountChange: z.boolean(),
  expiresAfterHours: z.number().int(),
  updatedAt: timestamp.nullable().describe('null: never set (no approvals needed)'),
});

const formatted = (entries: Record<string, bigint>) =>
  Object.fromEntries(
    Object.entries(entries).map(([currency, above]) => {
      const asset = findAsset(currency);
      return [currency, asset ? formatAmount(above, asset) : above.toString()];
    }),
  );
const present = (p: ApprovalPolicy) => ({
  refund: formatted(p.refund),
  payout: formatted(p.payout),
  bankAccountChange: p.bankAccountChange,
  expiresAfterHours: Math.round(p.expiresAfterSeconds / 3600),
  updatedAt: p.updatedAt?.toISOString() ?? null,
});

export async function registerApprovalThresholdRoutes(app: ZodApp, deps: AdminDeps): Promise<void> {
  const kinds = [
    {
      path: '/merchants/:id/approval-thresholds',
      tag: 'merchants',
      params: numericIdParam,
      body: merchantBody,
      tenantOf: async (params: unknown): Promise<ApprovalTenant> => {
        const { id } = params as z.output<typeof numericIdParam>;
        await deps.merchants.get(deps.db, id);
        return { kind: 'merchant', id: String(id) };
      },
    },
    {
      path: '/stores/:id/approval-thresholds',
      tag: 'stores',
      params: idParam,
      body: storeBody,
      tenantOf: async (params: unknown): Promise<ApprovalTenant> => {
        const { id } = params as z.output<typeof idParam>;
        await deps.stores.get(deps.db, id);
        return { kind: 'store', id };
      },
    },
  ];
  for (const kind of kinds) {
    app.get(
      kind.path,
      {
        schema: {
          summary: 'Which console actions need a second person’s approval',
          tags: [kind.tag],
          params: kind.params,
          response: { 200: policyView, ...standardErrors },
        },
      },
      async (request) => present(await deps.approvals.policy(deps.db, await kind.tenantOf(request.params))),
    );
    app.put(
      kind.path,
      {
        schema: {
          summary:
            'Set which console actions need a second person’s approval: refunds and payouts above an amount per currency, bank account changes (replaces the whole policy)',
          tags: [kind.tag],
          params: kind.params,
          body: kind.body,
          response: { 200: policyView, ...standardErrors },
        },
      },
      async (request) => {
        const body = request.body as z.output<typeof merchantBody>;
        const tenant = await kind.tenantOf(request.params);
        const policy = await deps.approvals.setPolicy(deps.db, tenant, {
          refund: body.refund ?? {},
          payout: body.payout ?? {},
          bankAccountChange: body.bankAccountChange ?? false,
          expiresAfterSeconds: (body.expiresAfterHours ?? DEFAULT_EXPIRY_SECONDS / 3600) * 3600,
        });
        return present(policy);
      },
    );
  }
}
