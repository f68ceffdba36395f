// /admin/merchants: payments merchants with their sites; API private keys are issued and revoked here.
import { z } from 'zod';
import { runTransaction } from '../../platform/db/transact.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { brandField } from '../../platform/tenants/brand.ts';
import type { Merchant } from '../../platform/tenants/merchants-service.ts';
import { tenantChangeSettled } from '../../platform/tenants/tenant-changes.ts';
import type { AdminDeps } from './admin-deps.ts';
import {
  frameAncestorsField,
  nameField,
  numericIdParam,
  standardErrors,
  timestamp,
  urlField,
} from './schemas.ts';

const siteView = z.object({
  id: z.number().int(),
  name: z.string(),
  publicKey: z.string().describe('pk_<env>_<siteId>: names the site in hosted checkout forms'),
  ipnUrl: z.string().nullable(),
  frameAncestors: z.array(z.string()),
  brand: z.object({
    name: z.string().optional(),
    logoUrl: z.string().optional(),
    color: z.string().optional(),
  }),
  mcc: z.string().nullable().describe('its merchant category code (ISO 18245), sent with its authorizations'),
  country: z.string().nullable().describe('its country (ISO 3166 alpha-2), sent with its authorizations'),
});
/** A site as the card network knows it: what an issuer's spending controls read (docs/payments.md, Sites) */
const cardAcceptorFields = {
  mcc: z
    .string()
    .regex(/^\d{4}$/, 'four digits (ISO 18245)')
    .nullable()
    .optional()
    .describe('its merchant category code, e.g. 5734 (computer software stores); null: none'),
  country: z
    .string()
    .regex(/^[A-Z]{2}$/, 'an ISO 3166 alpha-2 code in capitals')
    .nullable()
    .optional()
    .describe('the country it trades from; null: none'),
};
const merchantView = z.object({
  id: z.number().int(),
  name: z.string(),
  createdAt: timestamp,
  sites: z.array(siteView),
});
const apiKeyView = z.object({ apiKey: z.string(), apiKeyId: z.string() });
const secretKeyFields = {
  secretKey: z
    .string()
    .describe(
      'sk_<env>_<key>: Bearer credential for this site, checksum key of its hosted checkout, AES key of its IPN and results. Shown once.',
    ),
  ipnSecret: z.string().describe('The key alone (the part after sk_<env>_)'),
};

const present = (m: Merchant) => ({ ...m, createdAt: m.createdAt.toISOString() });

export async function registerMerchantRoutes(app: ZodApp, deps: AdminDeps): Promise<void> {
  app.post(
    '/merchants',
    {
      schema: {
        summary:
          'Create a merchant with its sites; the API key and the sites’ secret keys are shown only in this answer',
        tags: ['merchants'],
        body: z.object({
          name: nameField,
          sites: z
            .array(
              z.object({
                name: nameField,
                ipnUrl: urlField,
                frameAncestors: frameAncestorsField,
                brand: brandField.optional(),
                ...cardAcceptorFields,
              }),
            )
            .min(1)
            .max(50),
        }),
        response: {
          201: merchantView.extend({
            apiKey: z.string(),
            apiKeyId: z.string(),
            sites: z.array(siteView.extend(secretKeyFields)),
          }),
          ...standardErrors,
        },
      },
    },
    async (request, reply) => {
      const sites = request.body.sites.map((site, i) => ({
        name: site.name,
        ipnUrl: deps.checkWebhookUrl(site.ipnUrl, `sites[${i}].ipnUrl`),
        ...(site.frameAncestors ? { frameAncestors: site.frameAncestors } : {}),
        ...(site.brand ? { brand: site.brand } : {}),
        ...(site.mcc !== undefined ? { mcc: site.mcc } : {}),
        ...(site.country !== undefined ? { country: site.country } : {}),
      }));
      const created = await runTransaction(deps.db, (tx) =>
        deps.merchants.create(tx, { name: request.body.name, sites }),
      );
      return reply.code(201).send({ ...created, createdAt: created.createdAt.toISOString() });
    },
  );

  app.get(
    '/merchants',
    {
      schema: {
        summary: 'List merchants',
        tags: ['merchants'],
        response: { 200: z.object({ data: z.array(merchantView) }), ...standardErrors },
      },
    },
    async () => ({ data: (await deps.merchants.list(deps.db)).map(present) }),
  );

  app.get(
    '/merchants/:id',
    {
      schema: {
        summary: 'Retrieve a merchant',
        tags: ['merchants'],
        params: numericIdParam,
        response: { 200: merchantView, ...standardErrors },
      },
    },
    async (request) => present(await deps.merchants.get(deps.db, request.params.id)),
  );

  app.patch(
    '/merchants/:id/sites/:siteId',
    {
      schema: {
        summary:
          'Change a site’s name, IPN URL, brand (its hosted pages’ name, logo, colour), the origins allowed to embed its checkout, or its category code and country',
        tags: ['merchants'],
        params: numericIdParam.extend({ siteId: z.coerce.number().int().positive() }),
        body: z.object({
          name: nameField.optional(),
          ipnUrl: urlField,
          frameAncestors: frameAncestorsField,
          brand: brandField.optional(),
          ...cardAcceptorFields,
        }),
        response: { 200: siteView, ...standardErrors },
      },
    },
    async (request) => {
      const ipnUrl =
        request.body.ipnUrl === undefined ? undefined : deps.checkWebhookUrl(request.body.ipnUrl, 'ipnUrl');
      const site = await deps.merchants.updateSite(deps.db, request.params.id, request.params.siteId, {
        ...(request.body.name !== undefined ? { name: request.body.name } : {}),
        ...(ipnUrl !== undefined ? { ipnUrl } : {}),
        ...(request.body.frameAncestors !== undefined ? { frameAncestors: request.body.frameAncestors } : {}),
        ...(request.body.brand !== undefined ? { brand: request.body.brand } : {}),
        ...(request.body.mcc !== undefined ? { mcc: request.body.mcc } : {}),
        ...(request.body.country !== undefined ? { country: request.body.country } : {}),
      });
      await tenantChangeSettled(deps.db, request.log);
      return site;
    },
  );

  app.post(
    '/merchants/:id/sites/:siteId/secret-key/rotate',
    {
      schema: {
        summary:
          'Give a site a new secret key, shown only in this answer; the previous one stays valid for overlapSeconds',
        tags: ['merchants'],
        params: numericIdParam.extend({ siteId: z.coerce.number().int().positive() }),
        body: z
          .object({
            overlapSeconds: z
              .number()
              .int()
              .min(0)
              .max(30 * 24 * 3600)
              .optional()
              .describe('How long the previous key keeps working as Bearer and checksum key (default 86400)'),
          })
          .nullish(),
        response: {
          201: z.object({
            siteId: z.number().int(),
            publicKey: z.string(),
            ...secretKeyFields,
            previousKeyValidUntil: timestamp.nullable(),
          }),
          ...standardErrors,
        },
      },
    },
    async (request, reply) => {
      const rotated = await runTransaction(deps.db, (tx) =>
        deps.merchants.rotateSecretKey(
          tx,
          request.params.id,
          request.params.siteId,
          request.body?.overlapSeconds ?? 86_400,
        ),
      );
      await tenantChangeSettled(deps.db, request.log);
      return reply
        .code(201)
        .send({ ...rotated, previousKeyValidUntil: rotated.previousKeyValidUntil?.toISOString() ?? null });
    },
  );

  app.post(
    '/merchants/:id/api-keys',
    {
      schema: {
        summary: 'Issue another API private key (older keys stay valid until revoked)',
        tags: ['merchants'],
        params: numericIdParam,
        response: { 201: apiKeyView, ...standardErrors },
      },
    },
    async (request, reply) => {
      await deps.merchants.get(deps.db, request.params.id);
      return reply.code(201).send(await deps.merchants.issueApiKey(deps.db, request.params.id));
    },
  );

  app.post(
    '/merchants/:id/api-keys/:apiKeyId/revoke',
    {
      schema: {
        summary: 'Revoke an API private key: it answers 401 from now on',
        tags: ['merchants'],
        params: numericIdParam.extend({ apiKeyId: z.uuid() }),
        response: { 200: z.object({ apiKeyId: z.string(), revoked: z.literal(true) }), ...standardErrors },
      },
    },
    async (request) => {
      await deps.merchants.revokeApiKey(deps.db, request.params.id, request.params.apiKeyId);
      await tenantChangeSettled(deps.db, request.log);
      return { apiKeyId: request.params.apiKeyId, revoked: true as const };
    },
  );
}
