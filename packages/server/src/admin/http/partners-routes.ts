// /admin/partners: the operator onboards card issuing partners (README, Onboarding tenants).
import { z } from 'zod';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import type { Partner } from '../../platform/tenants/partners-service.ts';
import { tenantChangeSettled } from '../../platform/tenants/tenant-changes.ts';
import type { AdminDeps } from './admin-deps.ts';
import { idParam, nameField, standardErrors, timestamp, urlField } from './schemas.ts';

const partnerView = z.object({
  id: z.string(),
  partnerId: z.string(),
  name: z.string(),
  webhookUrl: z.string().nullable(),
  webhookRedeliverWhenBack: z.boolean(),
  createdAt: timestamp,
});

/** Tessera's extension to the issuing spec's three attempts (docs/webhooks.md, Waiting deliveries) */
const redeliverWhenBack = z
  .boolean()
  .optional()
  .describe(
    'After the three attempts fail, keep the event waiting and deliver it, in order, once the endpoint answers 2xx again (default true); false gives up after three, as the spec says',
  );

const present = (p: Partner) => ({ ...p, createdAt: p.createdAt.toISOString() });

export async function registerPartnerRoutes(app: ZodApp, deps: AdminDeps): Promise<void> {
  app.post(
    '/partners',
    {
      schema: {
        summary: 'Create a partner; the API key and webhook signing key are shown only in this answer',
        tags: ['partners'],
        body: z.object({
          name: nameField,
          webhookUrl: urlField,
          webhookRedeliverWhenBack: redeliverWhenBack,
        }),
        response: {
          201: partnerView.extend({ apiKey: z.string(), webhookSigningKey: z.string() }),
          ...standardErrors,
        },
      },
    },
    async (request, reply) => {
      const webhookUrl = deps.checkWebhookUrl(request.body.webhookUrl, 'webhookUrl');
      const { name, webhookRedeliverWhenBack } = request.body;
      const created = await deps.partners.create(deps.db, {
        name,
        webhookUrl,
        ...(webhookRedeliverWhenBack !== undefined ? { webhookRedeliverWhenBack } : {}),
      });
      return reply
        .code(201)
        .send({ ...present(created), apiKey: created.apiKey, webhookSigningKey: created.webhookSigningKey });
    },
  );

  app.get(
    '/partners',
    {
      schema: {
        summary: 'List partners',
        tags: ['partners'],
        response: { 200: z.object({ data: z.array(partnerView) }), ...standardErrors },
      },
    },
    async () => ({ data: (await deps.partners.list(deps.db)).map(present) }),
  );

  app.get(
    '/partners/:id',
    {
      schema: {
        summary: 'Retrieve a partner',
        tags: ['partners'],
        params: idParam,
        response: { 200: partnerView, ...standardErrors },
      },
    },
    async (request) => present(await deps.partners.get(deps.db, request.params.id)),
  );

  app.patch(
    '/partners/:id',
    {
      schema: {
        summary: 'Change a partner’s name, webhook URL or whether failed events wait for its endpoint',
        tags: ['partners'],
        params: idParam,
        body: z.object({
          name: nameField.optional(),
          webhookUrl: urlField,
          webhookRedeliverWhenBack: redeliverWhenBack,
        }),
        response: { 200: partnerView, ...standardErrors },
      },
    },
    async (request) => {
      const webhookUrl =
        request.body.webhookUrl === undefined
          ? undefined
          : deps.checkWebhookUrl(request.body.webhookUrl, 'webhookUrl');
      const updated = await deps.partners.update(deps.db, request.params.id, {
        ...(request.body.name !== undefined ? { name: request.body.name } : {}),
        ...(webhookUrl !== undefined ? { webhookUrl } : {}),
        ...(request.body.webhookRedeliverWhenBack !== undefined
          ? { webhookRedeliverWhenBack: request.body.webhookRedeliverWhenBack }
          : {}),
      });
      await tenantChangeSettled(deps.db, request.log);
      return present(updated);
    },
  );
}
