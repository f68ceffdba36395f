// /sandbox/bank/…: what the banks do to a payout (docs/payouts.md, The bank rail): pay it (the operator's
// bank books it: on the files rail a camt.054 is written into the inbox and read), return it after it was
// paid or while it travels (a closed account, AC04), or reject it before it is paid (pain.002 RJCT). Each
// is the payout's own lifecycle step: the tenant hears payout.paid, payout.returned or payout.failed, and
// a returned or failed payout's money goes back to its balance.
import { z } from 'zod';
import { standardErrors } from '../../admin/http/schemas.ts';
import type { Executor } from '../../platform/db/database.ts';
import type { Transact } from '../../platform/db/transact.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import type { PayoutLifecycle } from '../../platform/payouts/payout-lifecycle.ts';
import { payoutView } from '../../platform/payouts/payout-view.ts';
import type { BankRail } from '../../rails/bank/port.ts';

/** An ISO 20022 external status reason code: AC04 closed account, AC01 wrong account number, MS03… */
const reasonCode = z.string().regex(/^[A-Z0-9]{4}$/, 'must be an ISO 20022 reason code such as AC04');

export async function registerBankSandboxRoutes(
  app: ZodApp,
  deps: { transact: Transact; lifecycle: PayoutLifecycle; bank: BankRail },
): Promise<void> {
  const params = z.object({ id: z.string().max(64) });
  const body = z.object({ reasonCode: reasonCode.default('AC04') });
  const payout = z.object({ id: z.string(), status: z.string(), failureCode: z.string().nullable() });
  const present = async (tx: Executor, id: string) => {
    const view = payoutView(
      await tx.selectFrom('payouts').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),
    );
    return { id: view.id, status: view.status, failureCode: view.failureCode };
  };
  app.post(
    '/bank/payouts/:id/pay',
    {
      schema: {
        summary:
          'The bank books a payout in transit: paid at once on the simulator; on the files rail a camt.054 is written into the inbox and read',
        tags: ['payouts'],
        params,
        response: { 200: payout, ...standardErrors },
      },
    },
    async (request) => {
      await deps.bank.book(request.params.id);
      return deps.transact((tx) => present(tx, request.params.id));
    },
  );
  for (const [action, to, summary] of [
    [
      'return',
      'returned',
      'Return a payout in transit or paid, as the beneficiary’s bank would (default reason AC04)',
    ],
    [
      'reject',
      'failed',
      'Reject a payout not yet paid, as the bank would in a pain.002 (default reason AC04)',
    ],
  ] as const) {
    app.post(
      `/bank/payouts/:id/${action}`,
      { schema: { summary, tags: ['payouts'], params, body, response: { 200: payout, ...standardErrors } } },
      async (request) =>
        deps.transact(async (tx) => {
          await deps.lifecycle.step(tx, request.params.id, to, { failureCode: request.body.reasonCode });
          return present(tx, request.params.id);
        }),
    );
  }
}
