// /site/{siteId}/bank-account (Tessera's own routes, docs/payouts.md): the account a site's payouts go
// to. A merchant's key reads and sets its own sites' accounts; another merchant's site is not found.
import { z } from 'zod';
import {
  type BankAccount,
  type BankAccounts,
  bicField,
  holderNameField,
  ibanField,
} from '../../platform/bank-accounts/bank-accounts.ts';
import type { Db } from '../../platform/db/database.ts';
import { notFound } from '../../platform/errors/domain-error.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { type MerchantAuthenticator, merchantOf } from './authenticate.ts';
import { accepted, envelope, errorEnvelope, ok, standardErrors } from './envelope.ts';
import { intField } from './fields.ts';

const bankAccountView = z.object({
  siteId: z.number().int(),
  iban: z.string().describe('masked: country, check digits and the last four characters'),
  country: z.string(),
  bic: z.string().nullable(),
  holderName: z.string(),
  updatedAt: z.string(),
  status: z
    .enum(['active', 'held'])
    .describe(
      'active: payouts go to it; held: a change held for review by a risk rule (docs/risk.md), answered 202',
    ),
});

const present = (siteId: number, a: BankAccount): z.infer<typeof bankAccountView> => ({
  siteId,
  iban: a.iban,
  country: a.country,
  bic: a.bic,
  holderName: a.holderName,
  updatedAt: a.updatedAt.toISOString().replace('Z', '+00:00'),
  status: a.status,
});

export async function registerBankAccountRoutes(
  app: ZodApp,
  deps: { db: Db; bankAccounts: BankAccounts; authenticate: MerchantAuthenticator },
): Promise<void> {
  const common = { onRequest: deps.authenticate };
  const params = z.object({ siteId: intField });
  const ownSite = (siteIds: number[], siteId: number) => {
    if (!siteIds.includes(siteId)) throw notFound('site');
    return { kind: 'site' as const, siteId };
  };

  app.get(
    '/site/:siteId/bank-account',
    {
      ...common,
      schema: {
        summary: 'The bank account the site’s payouts go to (Tessera extension)',
        tags: ['payouts'],
        params,
        response: { 200: envelope(bankAccountView), ...standardErrors },
      },
    },
    async (request) => {
      const owner = ownSite(merchantOf(request).siteIds, request.params.siteId);
      return ok(present(owner.siteId, await deps.bankAccounts.get(deps.db, owner)));
    },
  );

  app.put(
    '/site/:siteId/bank-account',
    {
      ...common,
      schema: {
        summary:
          'Set the bank account the site’s payouts go to (Tessera extension); the IBAN is shown masked',
        tags: ['payouts'],
        params,
        body: z.object({ iban: ibanField, bic: bicField.optional(), holderName: holderNameField }),
        response: {
          200: envelope(bankAccountView),
          202: envelope(bankAccountView),
          403: errorEnvelope,
          ...standardErrors,
        },
      },
    },
    async (request, reply) => {
      const owner = ownSite(merchantOf(request).siteIds, request.params.siteId);
      const { iban, bic, holderName } = request.body;
      const account = await deps.bankAccounts.put(deps.db, owner, { iban, bic, holderName });
      const view = present(owner.siteId, account);
      return account.status === 'held' ? reply.code(202).send(accepted(view)) : ok(view);
    },
  );
}
