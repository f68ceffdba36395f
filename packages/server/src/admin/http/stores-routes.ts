// /admin/stores: crypto merchant stores, their enabled currencies and refund setting.
import { z } from 'zod';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { brandField } from '../../platform/tenants/brand.ts';
import type { Store } from '../../platform/tenants/stores-service.ts';
import { tenantChangeSettled } from '../../platform/tenants/tenant-changes.ts';
import { readEvmWallet } from '../../rails/chain/hd-addresses.ts';
import type { AdminDeps } from './admin-deps.ts';
import { frameAncestorsField, idParam, nameField, standardErrors, timestamp, urlField } from './schemas.ts';

const currencyPair = z
  .object({
    currency: z.string().trim().toUpperCase(),
    network: z.string().trim().toUpperCase(),
  })
  .meta({ example: { currency: 'USDC', network: 'ETH' } });
/** The store's own EVM wallet: an account-level xpub (m/44'/60'/0'); null goes back to the operator's. */
const evmXpubField = z
  .string()
  .trim()
  .max(200)
  .nullable()
  .optional()
  .superRefine((value, ctx) => {
    const wallet = value ? readEvmWallet(value) : undefined;
    if (wallet && 'problem' in wallet) ctx.addIssue({ code: 'custom', message: wallet.problem });
  })
  // The reference's example keeps the operator's wallet (an xpub is the store's own to give).
  .meta({ example: null });

const storeView = z.object({
  id: z.string(),
  name: z.string(),
  clientId: z.string(),
  webhookUrl: z.string().nullable(),
  refundsEnabled: z.boolean(),
  currencies: z.array(z.object({ currency: z.string(), network: z.string() })),
  frameAncestors: z.array(z.string()),
  brand: z.object({
    name: z.string().optional(),
    logoUrl: z.string().optional(),
    color: z.string().optional(),
  }),
  evmXpub: z.string().nullable(),
  createdAt: timestamp,
});

const present = ({ evmAccountKey, ...s }: Store) => ({
  ...s,
  evmXpub: evmAccountKey,
  createdAt: s.createdAt.toISOString(),
});

export async function registerStoreRoutes(app: ZodApp, deps: AdminDeps): Promise<void> {
  app.post(
    '/stores',
    {
      schema: {
        summary: 'Create a store; the client secret and webhook secret are shown only in this answer',
        description:
          'currencies defaults to every supported asset/network pair; refundsEnabled defaults to true. evmXpub is the store’s own EVM wallet (an account-level xpub, m/44’/60’/0’): deposit addresses on a real EVM chain are derived from it, else from the operator’s TESSERA_EVM_XPUB.',
        tags: ['stores'],
        body: z.object({
          name: nameField,
          webhookUrl: urlField,
          refundsEnabled: z.boolean().optional(),
          currencies: z.array(currencyPair).min(1).max(50).optional(),
          frameAncestors: frameAncestorsField,
          brand: brandField.optional(),
          evmXpub: evmXpubField,
        }),
        response: {
          201: storeView.extend({ clientSecret: z.string(), webhookSecret: z.string() }),
          ...standardErrors,
        },
      },
    },
    async (request, reply) => {
      const { name, refundsEnabled, currencies, frameAncestors, brand, evmXpub } = request.body;
      const webhookUrl = deps.checkWebhookUrl(request.body.webhookUrl, 'webhookUrl');
      const created = await deps.stores.create(deps.db, {
        name,
        webhookUrl,
        ...(refundsEnabled !== undefined ? { refundsEnabled } : {}),
        ...(currencies !== undefined ? { currencies } : {}),
        ...(frameAncestors !== undefined ? { frameAncestors } : {}),
        ...(brand !== undefined ? { brand } : {}),
        ...(evmXpub !== undefined ? { evmAccountKey: evmXpub } : {}),
      });
      return reply.code(201).send({
        ...present(created),
        clientSecret: created.clientSecret,
        webhookSecret: created.webhookSecret,
      });
    },
  );

  app.get(
    '/stores',
    {
      schema: {
        summary: 'List stores',
        tags: ['stores'],
        response: { 200: z.object({ data: z.array(storeView) }), ...standardErrors },
      },
    },
    async () => ({ data: (await deps.stores.list(deps.db)).map(present) }),
  );

  app.get(
    '/stores/:id',
    {
      schema: {
        summary: 'Retrieve a store',
        tags: ['stores'],
        params: idParam,
        response: { 200: storeView, ...standardErrors },
      },
    },
    async (request) => present(await deps.stores.get(deps.db, request.params.id)),
  );

  app.patch(
    '/stores/:id',
    {
      schema: {
        summary:
          'Change a store’s name, webhook URL, refund setting, enabled currencies, embedding origins or EVM wallet',
        tags: ['stores'],
        params: idParam,
        body: z.object({
          name: nameField.optional(),
          webhookUrl: urlField,
          refundsEnabled: z.boolean().optional(),
          currencies: z.array(currencyPair).min(1).max(50).optional(),
          frameAncestors: frameAncestorsField,
          brand: brandField.optional(),
          evmXpub: evmXpubField,
        }),
        response: { 200: storeView, ...standardErrors },
      },
    },
    async (request) => {
      const { name, refundsEnabled, currencies, frameAncestors, brand, evmXpub } = request.body;
      const webhookUrl =
        request.body.webhookUrl === undefined
          ? undefined
          : deps.checkWebhookUrl(request.body.webhookUrl, 'webhookUrl');
      const updated = await deps.stores.update(deps.db, request.params.id, {
        ...(name !== undefined ? { name } : {}),
        ...(webhookUrl !== undefined ? { webhookUrl } : {}),
        ...(refundsEnabled !== undefined ? { refundsEnabled } : {}),
        ...(currencies !== undefined ? { currencies } : {}),
        ...(frameAncestors !== undefined ? { frameAncestors } : {}),
        ...(brand !== undefined ? { brand } : {}),
        ...(evmXpub !== undefined ? { evmAccountKey: evmXpub } : {}),
      });
      await tenantChangeSettled(deps.db, request.log);
      return present(updated);
    },
  );
}
