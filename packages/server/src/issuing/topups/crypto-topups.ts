// Crypto topups (docs/issuing.md, Topups: /topups/crypto/*): the customer picks an asset and network,
// may take a rate quote, sees the fee, and gets a deposit address with the exact amount to send. The
// chain rail reports the transfer when seen and when final; each confirmation in between is reported by
// a sweep on the clock (topupStatusChanged). Once final, the account is credited with what arrived,
// converted at the quoted rate (rounded down), less the fee.
import type { Clock } from '../../platform/clock/clock.ts';
import { addSeconds } from '../../platform/clock/clock.ts';
import type { Db, Tx } from '../../platform/db/database.ts';
import { type Transact, transactEach } from '../../platform/db/transact.ts';
import { DomainError, validationFailed } from '../../platform/errors/domain-error.ts';
import { newId } from '../../platform/ids.ts';
import type { ClientAmount } from '../../platform/money/amount.ts';
import { type Asset, findAsset, findNetwork, listAssets } from '../../platform/money/assets.ts';
import { convert, convertBack } from '../../platform/money/rates.ts';
import type { ChainNews, ChainRail } from '../../rails/chain/port.ts';
import type { FxRates } from '../../rails/fx/port.ts';
import type { CustomerRef } from '../kyc/kyc-service.ts';
import type { Topup, TopupRow, TopupsService, TopupUsage } from './topups-service.ts';

export const CRYPTO_TOPUP_REFERENCE = 'issuing-topup';
/** How long a rate quote holds (a deposit takes minutes to be seen) */
export const QUOTE_TTL_SECONDS = 15 * 60;
/** How long a deposit address waits for its transfer */
export const CRYPTO_TOPUP_TTL_SECONDS = 60 * 60;
/** The service fee, in basis points of the amount credited (1 %) */
export const FEE_BASIS_POINTS = 100n;
/** The smallest crypto topup, in major units of the account currency */
export const MINIMUM_MAJOR = 10n;
const DESK = { ownerType: 'issuing_crypto_desk', ownerId: 'fx' };

export interface CryptoQuote {
  quoteId: string;
  currency: string;
  network: string;
  accountCurrency: string;
  rateE18: bigint;
  expiresAt: Date;
}

export interface CryptoFees {
  currency: string;
  network: string;
  accountCurrency: string;
  amount: bigint;
  fee: bigint;
  total: bigint;
  cryptoAmount: bigint;
  rateE18: bigint;
}

export class CryptoTopups {
  constructor(
    private readonly deps: {
      db: Db;
      transact: Transact;
      clock: Clock;
      chain: ChainRail;
      fx: FxRates;
      topups: TopupsService;
    },
  ) {}

  /** Every asset and network pair a topup can arrive on. */
  currencies() {
    return listAssets('crypto').flatMap((asset) =>
      asset.networks.map((n) => ({
        currency: asset.code,
        network: n.code,
        networkName: n.name,
        confirmationsRequired: n.confirmationsRequired,
      })),
    );
  }

  async limits(customer: CustomerRef, currency: string): Promise<TopupUsage & { minimum: bigint }> {
    const usage = await this.deps.topups.usage(customer, currency);
    const asset = findAsset(usage.currency) as Asset;
    return { ...usage, minimum: MINIMUM_MAJOR * 10n ** BigInt(asset.exponent) };
  }

  /** A rate quote for one asset into the account currency, usable once by one topup until it expires. */
  async quote(
    customer: CustomerRef,
    input: { currency: string; network: string; accountCurrency: string },
  ): Promise<CryptoQuote> {
    const { crypto, fiat } = this.pair(input);
    const now = this.deps.clock.now();
    const quote = {
      id: newId('quote'),
      customer_id: customer.customerId,
      asset: crypto.code,
      network: input.network,
      currency: fiat.code,
      rate_e18: await this.deps.fx.rate(this.deps.db, crypto.code, fiat.code),
      created_at: now,
      expires_at: addSeconds(now, QUOTE_TTL_SECONDS),
    };
    await this.deps.db.insertInto('issuing_topup_quotes').values(quote).execute();
    return {
      quoteId: quote.id,
      currency: crypto.code,
      network: input.network,
      accountCurrency: fiat.code,
      rateE18: quote.rate_e18,
      expiresAt: quote.expires_at,
    };
  }

  /** What a topup of `amount` (credited) costs now: the fee, and the crypto to send at the current rate. */
  async fees(input: { currency: string; network: string; accountCurrency: string; amount: ClientAmount }) {
    const { crypto, fiat } = this.pair(input);
    const amount = input.amount.in(fiat);
    const rateE18 = await this.deps.fx.rate(this.deps.db, crypto.code, fiat.code);
    return this.price(crypto, fiat, input.network, amount, rateE18);
  }

  /** A deposit address and the exact amount to send, at the quote's rate (or the current one). */
  async create(
    customer: CustomerRef,
    input: {
      accountId: string;
      amount: ClientAmount;
      currency: string;
      network: string;
      quoteId?: string;
    },
  ): Promise<Topup> {
    return this.deps.topups.create(customer, {
      accountId: input.accountId,
      amount: input.amount,
      kind: 'crypto',
      method: 'crypto',
      ttlSeconds: CRYPTO_TOPUP_TTL_SECONDS,
      extra: async (tx, { asset: fiat, amount, topupId }) => {
        const { crypto } = this.pair({ ...input, accountCurrency: fiat.code });
        const minimum = MINIMUM_MAJOR * 10n ** BigInt(fiat.exponent);
        if (amount < minimum) {
          throw validationFailed('amount', `a crypto topup is at least ${MINIMUM_MAJOR} ${fiat.code}`);
        }
        const rateE18 = input.quoteId
          ? await this.useQuote(tx, customer, input.quoteId, crypto.code, input.network, fiat.code)
          : await this.deps.fx.rate(tx, crypto.code, fiat.code);
        const price = this.price(crypto, fiat, input.network, amount, rateE18);
        const network = findNetwork(crypto.code, input.network);
        return {
          crypto_asset: crypto.code,
          crypto_network: input.network,
          crypto_amount: price.cryptoAmount,
          rate_e18: rateE18,
          fee: price.fee,
          confirmations: 0,
          confirmations_required: network?.confirmationsRequired ?? 1,
          deposit_address: await this.deps.chain.depositAddress(tx, {
            network: input.network,
            asset: crypto.code,
            reference: `${CRYPTO_TOPUP_REFERENCE}:${topupId}`,
          }),
        };
      },
    });
  }

  /** The chain rail's news of a deposit: seen (confirming), then final (credited). */
  async onChain(tx: Tx, news: ChainNews): Promise<void> {
    const topupId = news.transfer.reference.slice(CRYPTO_TOPUP_REFERENCE.length + 1);
    const topup = await this.deps.topups.lock(tx, 'id', topupId);
    if (!topup) return;
    const transfer = news.transfer;
    if (news.kind === 'reverted') {
      // A reorg took the deposit off the chain before it was final: the top-up waits for it again.
      if (topup.status !== 'confirming') return;
      await this.deps.topups.update(tx, topup, {
        status: 'pending',
        crypto_received: null,
        transfer_broadcast_at: null,
        transfer_id: null,
        confirmations: 0,
      });
      return;
    }
    if (news.kind === 'seen') {
      if (topup.status !== 'pending' && topup.status !== 'expired') return;
      // A deposit after the address expired is still the customer's: priced at the rate of the moment.
      const rate =
        topup.status === 'expired'
          ? await this.deps.fx.rate(tx, transfer.asset, topup.currency)
          : BigInt(topup.rate_e18 ?? 0);
      await this.deps.topups.update(tx, topup, {
        status: 'confirming',
        rate_e18: rate,
        crypto_received: transfer.amount,
        transfer_broadcast_at: transfer.broadcastAt,
        transfer_id: transfer.id,
        confirmations: 0,
        confirmations_required: transfer.confirmationsRequired,
      });
      return;
    }
    const crypto = findAsset(transfer.asset) as Asset;
    const fiat = findAsset(topup.currency) as Asset;
    const value = convert(transfer.amount, crypto, fiat, BigInt(topup.rate_e18 ?? 0), 'down');
    if (topup.status === 'completed') {
      // Another transfer to the same address after completion: it is the customer's money too.
      await this.creditMore(tx, topup, transfer.id, value);
      return;
    }
    const fee = BigInt(topup.fee ?? 0);
    await this.deps.topups.credit(tx, topup, DESK, value > fee ? value - fee : 0n, {
      crypto_received: transfer.amount,
      confirmations: topup.confirmations_required,
    });
  }

  /** Sweep: every new confirmation of a deposit under way is reported (topupStatusChanged). */
  async reportConfirmations(): Promise<number> {
    const confirming = await this.deps.db
      .selectFrom('issuing_topups')
      .select('id')
      .where('status', '=', 'confirming')
      .limit(500)
      .execute();
    const now = this.deps.clock.now();
    return transactEach(this.deps.transact, confirming, async (tx, row) => {
      const topup = await this.deps.topups.lock(tx, 'id', row.id);
      if (topup?.status !== 'confirming' || !topup.transfer_broadcast_at) return false;
      const [confirmations = 0] = await this.deps.chain.confirmations(
        tx,
        [
          {
            id: topup.transfer_id ?? '',
            broadcastAt: topup.transfer_broadcast_at,
            confirmationsRequired: topup.confirmations_required ?? 1,
            network: topup.crypto_network ?? '',
            asset: topup.crypto_asset ?? '',
          },
        ],
        now,
      );
      if (confirmations <= (topup.confirmations ?? 0)) return false;
      await this.deps.topups.update(tx, topup, { confirmations });
      return true;
    });
  }

  private price(crypto: Asset, fiat: Asset, network: string, amount: bigint, rateE18: bigint): CryptoFees {
    // The fee is rounded up to the account currency's minor unit; what to send is rounded up, so what
    // arrives is always worth at least the amount plus the fee at that rate.
    const fee = (amount * FEE_BASIS_POINTS + 9_999n) / 10_000n;
    const total = amount + fee;
    return {
      currency: crypto.code,
      network,
      accountCurrency: fiat.code,
      amount,
      fee,
      total,
      cryptoAmount: convertBack(total, fiat, crypto, rateE18, 'up'),
      rateE18,
    };
  }

  private pair(input: { currency: string; network: string; accountCurrency: string }) {
    const crypto = findAsset(input.currency.toUpperCase());
    if (crypto?.kind !== 'crypto')
      throw validationFailed('currency', 'currency must be a supported crypto asset');
    if (!findNetwork(crypto.code, input.network)) {
      throw validationFailed('network', `${crypto.code} does not travel on ${input.network}`);
    }
    const fiat = findAsset(input.accountCurrency.toUpperCase());
    if (fiat?.kind !== 'fiat' || !this.deps.fx.supports(fiat.code)) {
      throw validationFailed('accountCurrency', 'the account currency cannot be priced');
    }
    return { crypto, fiat };
  }

  private async useQuote(
    tx: Tx,
    customer: CustomerRef,
    quoteId: string,
    asset: string,
    network: string,
    currency: string,
  ): Promise<bigint> {
    const quote = await tx
      .selectFrom('issuing_topup_quotes')
      .selectAll()
      .where('id', '=', quoteId)
      .where('customer_id', '=', customer.customerId)
      .forUpdate()
      .executeTakeFirst();
    if (!quote) throw new DomainError('not_found', 'quote not found', { field: 'quoteId' });
    if (quote.asset !== asset || quote.network !== network || quote.currency !== currency) {
      throw validationFailed('quoteId', 'the quote is for another currency, network or account currency');
    }
    if (quote.used_at) throw validationFailed('quoteId', 'the quote was already used');
    if (quote.expires_at <= this.deps.clock.now()) throw validationFailed('quoteId', 'the quote has expired');
    await tx
      .updateTable('issuing_topup_quotes')
      .set({ used_at: this.deps.clock.now() })
      .where('id', '=', quoteId)
      .execute();
    return BigInt(quote.rate_e18);
  }

  private async creditMore(tx: Tx, topup: TopupRow, transferId: string, value: bigint): Promise<void> {
    if (value <= 0n) return;
    await this.deps.topups.moveToAccount(tx, topup, DESK, value, `issuing-topup:${topup.id}:${transferId}`);
    await this.deps.topups.update(tx, topup, { credited_amount: BigInt(topup.credited_amount ?? 0) + value });
  }
}
