// A store's money in fiat (docs/payouts.md, Crypto stores): each confirmed transfer settles into the
// store's balance in the order's settlement currency, at the value its quote gave it, net of the store's
// fee, as a balance transaction available after the store's delay; the store is paid out to its bank
// account like a site. The coins stay on the store's crypto ledger account, in the platform's custody,
// where crypto refunds are paid from; an accepted refund takes its fiat amount back out of the balance.
// A store paid on the real chain into its own wallet (its own xpub) already holds its coins: nothing is
// settled, and each fee is an amount it owes (a negative balance, shown on its statement, never paid
// out: it is settled by the operator outside Tessera or against the store's next fiat settlements).
import type { Clock } from '../../platform/clock/clock.ts';
import type { Tx } from '../../platform/db/database.ts';
import type { Ledger } from '../../platform/ledger/ledger.ts';
import { balanceAccounts, revenueAccount } from '../../platform/payouts/balance-accounts.ts';
import {
  balanceTransaction,
  captureTransactions,
  insertBalanceTransactions,
} from '../../platform/payouts/balance-transactions.ts';
import { feeFor, type TermsStore } from '../../platform/payouts/terms.ts';

export class StoreSettlement {
  constructor(private readonly deps: { ledger: Ledger; terms: TermsStore; clock: Clock }) {}

  /** A transfer confirmed for an order: its fiat value settles, or (own wallet) its fee is owed. */
  async transferConfirmed(
    tx: Tx,
    input: { storeId: string; transferId: string; fiatValue: bigint; currency: string; ownWallet: boolean },
  ): Promise<void> {
    const owner = { kind: 'store' as const, storeId: input.storeId };
    const { fees, schedule } = await this.deps.terms.get(tx, owner);
    const fee = feeFor(fees, input.fiatValue, input.currency);
    const [balance] = await balanceAccounts(this.deps.ledger, tx, owner, input.currency);
    const revenue = await revenueAccount(this.deps.ledger, tx, input.currency, spread(input.transferId));
    const source = { type: 'crypto_transfer', id: input.transferId };
    const at = this.deps.clock.now();
    if (input.ownWallet) {
      if (fee === 0n) return;
      await this.deps.ledger.transfer(tx, {
        operationId: `crypto-fee:${input.transferId}`,
        legs: [
          { accountId: balance as string, amount: -fee },
          { accountId: revenue, amount: fee },
        ],
      });
      await insertBalanceTransactions(tx, [
        balanceTransaction({ owner, currency: input.currency, type: 'fee', source, gross: 0n, fee, at }),
      ]);
      return;
    }
    const legs = [
      { accountId: await this.conversion(tx, input.currency), amount: -input.fiatValue },
      { accountId: balance as string, amount: input.fiatValue - fee },
      { accountId: revenue, amount: fee },
    ];
    await this.deps.ledger.transfer(tx, { operationId: `crypto-settlement:${input.transferId}`, legs });
    await insertBalanceTransactions(
      tx,
      captureTransactions(
        { owner, currency: input.currency, source, gross: input.fiatValue, fee, at },
        schedule,
      ),
    );
  }

  /** A refund the buyer accepted: its fiat amount leaves the store's balance (the fee stays earned). */
  async refundAccepted(
    tx: Tx,
    input: { storeId: string; refundId: string; amount: bigint; currency: string },
  ): Promise<void> {
    const owner = { kind: 'store' as const, storeId: input.storeId };
    const [balance] = await balanceAccounts(this.deps.ledger, tx, owner, input.currency);
    await this.deps.ledger.transfer(tx, {
      operationId: `crypto-refund-settlement:${input.refundId}`,
      legs: [
        { accountId: balance as string, amount: -input.amount },
        { accountId: await this.conversion(tx, input.currency), amount: input.amount },
      ],
    });
    await insertBalanceTransactions(tx, [
      balanceTransaction({
        owner,
        currency: input.currency,
        type: 'refund',
        source: { type: 'crypto_refund', id: input.refundId },
        gross: -input.amount,
        at: this.deps.clock.now(),
      }),
    ]);
  }

  /** The platform's side of converting coins to fiat: what it owes stores for the coins it holds. */
  private conversion(tx: Tx, currency: string): Promise<string> {
    return this.deps.ledger.systemAccount(tx, {
      ownerType: 'platform',
      ownerId: 'crypto-conversion',
      asset: currency,
      purpose: 'conversion',
      isBounded: false,
    });
  }
}

/** A number to pick a revenue shard by, from a transfer's id. */
function spread(id: string): number {
  let n = 0;
  for (let i = 0; i < id.length; i++) n = (n * 31 + id.charCodeAt(i)) >>> 0;
  return n;
}
