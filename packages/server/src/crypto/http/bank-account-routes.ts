// /stores/bank_account (Tessera's own routes, docs/payouts.md): the account a store's payouts go to, as a
// JSON:API document. A store reads and sets its own only.
import { z } from 'zod';
import {
  type BankAccount,
  type BankAccounts,
  bicField,
  holderNameField,
  ibanField,
} from '../../platform/bank-accounts/bank-accounts.ts';
import type { Db } from '../../platform/db/database.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import { type StoreAuthenticator, storeOf } from './authenticate.ts';
import { errors, JSON_API } from './jsonapi.ts';

const bankAccountResource = z.object({
  type: z.literal('bank_accounts'),
  attributes: z.object({
    iban: z.string().describe('masked: country, check digits and the last four characters'),
    country: z.string(),
    bic: z.string().nullable(),
    holder_name: z.string(),
    updated_at: z.string(),
    status: z
      .enum(['active', 'held'])
      .describe(
        'active: payouts go to it; held: a change held for review by a risk rule (docs/risk.md), answered 202',
      ),
  }),
});

const present = (a: BankAccount): z.infer<typeof bankAccountResource> => ({
  type: 'bank_accounts',
  attributes: {
    iban: a.iban,
    country: a.country,
    bic: a.bic,
    holder_name: a.holderName,
    updated_at: a.updatedAt.toISOString(),
    status: a.status,
  },
});

export async function registerBankAccountRoutes(
  app: ZodApp,
  deps: { db: Db; bankAccounts: BankAccounts; authenticate: StoreAuthenticator },
): Promise<void> {
  const common = { onRequest: deps.authenticate };
  const ownerOf = (request: Parameters<typeof storeOf>[0]) => ({
    kind: 'store' as const,
    storeId: storeOf(request).id,
  });

  app.get(
    '/stores/bank_account',
    {
      ...common,
      schema: {
        summary: 'The bank account the store’s payouts go to (Tessera extension)',
        tags: ['payouts'],
        response: { 200: z.object({ data: bankAccountResource }), ...errors },
      },
    },
    async (request, reply) =>
      reply.type(JSON_API).send({ data: present(await deps.bankAccounts.get(deps.db, ownerOf(request))) }),
  );

  app.put(
    '/stores/bank_account',
    {
      ...common,
      schema: {
        summary:
          'Set the bank account the store’s payouts go to (Tessera extension); the IBAN is shown masked',
        tags: ['payouts'],
        body: z.object({
          data: z.object({
            type: z.literal('bank_accounts').optional(),
            attributes: z.object({ iban: ibanField, bic: bicField.optional(), holder_name: holderNameField }),
          }),
        }),
        response: {
          200: z.object({ data: bankAccountResource }),
          202: z.object({ data: bankAccountResource }),
          ...errors,
        },
      },
    },
    async (request, reply) => {
      const { iban, bic, holder_name: holderName } = request.body.data.attributes;
      const account = await deps.bankAccounts.put(deps.db, ownerOf(request), { iban, bic, holderName });
      return reply
        .code(account.status === 'held' ? 202 : 200)
        .type(JSON_API)
        .send({ data: present(account) });
    },
  );
}
