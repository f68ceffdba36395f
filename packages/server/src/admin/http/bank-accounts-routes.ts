// The operator sets and reads the bank account a site or a store is paid out to (docs/payouts.md), as the
// tenant can over its own API. The IBAN is answered masked here too.
import { z } from 'zod';
import {
  type BankAccount,
  type BankAccountOwner,
  bicField,
  holderNameField,
  ibanField,
} from '../../platform/bank-accounts/bank-accounts.ts';
import { notFound } from '../../platform/errors/domain-error.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import type { AdminDeps } from './admin-deps.ts';
import { idParam, numericIdParam, standardErrors, timestamp } from './schemas.ts';

const bankAccountView = z.object({
  iban: z.string().describe('masked: country, check digits and the last four characters'),
  country: z.string(),
  bic: z.string().nullable(),
  holderName: z.string(),
  updatedAt: timestamp,
});
const bankAccountBody = z.object({ iban: ibanField, bic: bicField.optional(), holderName: holderNameField });
const present = (a: BankAccount) => ({ ...a, updatedAt: a.updatedAt.toISOString() });

export async function registerBankAccountRoutes(app: ZodApp, deps: AdminDeps): Promise<void> {
  const siteParams = numericIdParam.extend({ siteId: z.coerce.number().int().positive() });
  const siteOf = async (merchantId: number, siteId: number): Promise<BankAccountOwner> => {
    const merchant = await deps.merchants.get(deps.db, merchantId);
    if (!merchant.sites.some((s) => s.id === siteId)) throw notFound('site');
    return { kind: 'site', siteId };
  };
  const storeOf = async (storeId: string): Promise<BankAccountOwner> => {
    await deps.stores.get(deps.db, storeId);
    return { kind: 'store', storeId };
  };
  const routes = [
    {
      path: '/merchants/:id/sites/:siteId/bank-account',
      tags: ['merchants'],
      params: siteParams,
      whose: 'site',
    },
    { path: '/stores/:id/bank-account', tags: ['stores'], params: idParam, whose: 'store' },
  ] as const;
  for (const route of routes) {
    const ownerOf = (params: { id: string | number; siteId?: number }) =>
      route.whose === 'site' ? siteOf(Number(params.id), params.siteId ?? 0) : storeOf(String(params.id));
    app.get(
      route.path,
      {
        schema: {
          summary: `The bank account the ${route.whose}’s payouts go to`,
          tags: [...route.tags],
          params: route.params,
          response: { 200: bankAccountView, ...standardErrors },
        },
      },
      async (request) =>
        present(await deps.bankAccounts.get(deps.db, await ownerOf(request.params as { id: string }))),
    );
    app.put(
      route.path,
      {
        schema: {
          summary: `Set the bank account the ${route.whose}’s payouts go to; the IBAN is answered masked`,
          tags: [...route.tags],
          params: route.params,
          body: bankAccountBody,
          response: { 200: bankAccountView, ...standardErrors },
        },
      },
      async (request) => {
        const { iban, bic, holderName } = request.body;
        const owner = await ownerOf(request.params as { id: string });
        return present(await deps.bankAccounts.put(deps.db, owner, { iban, bic, holderName }));
      },
    );
  }
}
