// The operator sets and reads the bank account a site or a store is paid out to (docs/payouts.md), as the
// tenant can over its own API. The IBAN is answered masked here too.
import { z } from 'zod';
import {
  type BankAccount,
  bicField,
  holderNameField,
  ibanField,
} from '../../platform/bank-accounts/bank-accounts.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import type { AdminDeps } from './admin-deps.ts';
import { errorBody, standardErrors, timestamp } from './schemas.ts';
import { ownerRoutes } from './tenant-owners.ts';

const bankAccountView = z.object({
  iban: z.string().describe('masked: country, check digits and the last four characters'),
  country: z.string(),
  bic: z.string().nullable(),
  holderName: z.string(),
  updatedAt: timestamp,
  status: z
    .enum(['active', 'held'])
    .describe(
      'active: payouts go to it; held: a change held for review by a risk rule (docs/risk.md), answered 202',
    ),
});
const bankAccountBody = z.object({ iban: ibanField, bic: bicField.optional(), holderName: holderNameField });
const present = (a: BankAccount) => ({ ...a, updatedAt: a.updatedAt.toISOString() });

export async function registerBankAccountRoutes(app: ZodApp, deps: AdminDeps): Promise<void> {
  for (const route of ownerRoutes(deps)) {
    const path = `${route.path}/bank-account`;
    app.get(
      path,
      {
        schema: {
          summary: `The bank account the ${route.whose}’s payouts go to`,
          tags: [route.tag],
          params: route.params,
          response: { 200: bankAccountView, ...standardErrors },
        },
      },
      async (request) => present(await deps.bankAccounts.get(deps.db, await route.ownerOf(request.params))),
    );
    app.put(
      path,
      {
        schema: {
          summary: `Set the bank account the ${route.whose}’s payouts go to; the IBAN is answered masked`,
          tags: [route.tag],
          params: route.params,
          body: bankAccountBody,
          response: { 200: bankAccountView, 202: bankAccountView, 403: errorBody, ...standardErrors },
        },
      },
      async (request, reply) => {
        const { iban, bic, holderName } = request.body;
        const owner = await route.ownerOf(request.params);
        const account = await deps.bankAccounts.put(deps.db, owner, { iban, bic, holderName });
        return reply.code(account.status === 'held' ? 202 : 200).send(present(account));
      },
    );
  }
}
