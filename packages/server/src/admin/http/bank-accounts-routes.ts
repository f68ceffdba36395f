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
  registerFor(
    app,
    deps,
    { path: '/merchants/:id/sites/:siteId/bank-account', tag: 'merchants', whose: 'site' },
    numericIdParam.extend({ siteId: z.coerce.number().int().positive() }),
    async ({ id, siteId }) => {
      const merchant = await deps.merchants.get(deps.db, id);
      if (!merchant.sites.some((s) => s.id === siteId)) throw notFound('site');
      return { kind: 'site', siteId };
    },
  );
  registerFor(
    app,
    deps,
    { path: '/stores/:id/bank-account', tag: 'stores', whose: 'store' },
    idParam,
    async ({ id }) => {
      await deps.stores.get(deps.db, id);
      return { kind: 'store', storeId: id };
    },
  );
}

/** GET and PUT of one owner's account; `ownerOf` finds the owner from the path, or answers 404. */
function registerFor<P extends z.ZodType>(
  app: ZodApp,
  deps: AdminDeps,
  route: { path: string; tag: string; whose: string },
  params: P,
  ownerOf: (params: z.output<P>) => Promise<BankAccountOwner>,
): void {
  // The params schema validated and transformed the path already; TypeScript cannot follow the generic.
  const pathOf = (validated: unknown) => validated as z.output<P>;
  app.get(
    route.path,
    {
      schema: {
        summary: `The bank account the ${route.whose}’s payouts go to`,
        tags: [route.tag],
        params,
        response: { 200: bankAccountView, ...standardErrors },
      },
    },
    async (request) => present(await deps.bankAccounts.get(deps.db, await ownerOf(pathOf(request.params)))),
  );
  app.put(
    route.path,
    {
      schema: {
        summary: `Set the bank account the ${route.whose}’s payouts go to; the IBAN is answered masked`,
        tags: [route.tag],
        params,
        body: bankAccountBody,
        response: { 200: bankAccountView, ...standardErrors },
      },
    },
    async (request) => {
      const { iban, bic, holderName } = request.body;
      const owner = await ownerOf(pathOf(request.params));
      return present(await deps.bankAccounts.put(deps.db, owner, { iban, bic, holderName }));
    },
  );
}
