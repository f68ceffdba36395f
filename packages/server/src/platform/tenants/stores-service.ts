// Stores of the crypto merchant API: client_id + client_secret (hashed) exchanged for session keys,
// a webhook secret (encrypted: HMAC signing needs it), enabled currencies and the refunds flag.

import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock/clock.ts';
import type { Encryptor } from '../crypto/encryption.ts';
import { hashToken, randomAlphanumeric } from '../crypto/hashing.ts';
import type { Executor } from '../db/database.ts';
import type { StoreCurrency } from '../db/schema.ts';
import { DomainError, notFound } from '../errors/domain-error.ts';
import { newId } from '../ids.ts';
import { findNetwork, listAssets } from '../money/assets.ts';
import { type Brand, brandOf } from './brand.ts';

export interface Store {
  id: string;
  name: string;
  clientId: string;
  webhookUrl: string | null;
  refundsEnabled: boolean;
  currencies: StoreCurrency[];
  /** Origins allowed to embed the store's hosted payment page (empty: none) */
  frameAncestors: string[];
  /** What its hosted pages show of it */
  brand: Brand;
  /** The store's own EVM wallet (account-level xpub) deposit addresses derive from; null: the operator's */
  evmAccountKey: string | null;
  createdAt: Date;
}

export interface CreatedStore extends Store {
  clientSecret: string;
  webhookSecret: string;
}

export interface StoreInput {
  name?: string;
  webhookUrl?: string | null;
  refundsEnabled?: boolean;
  currencies?: StoreCurrency[];
  frameAncestors?: string[];
  brand?: Brand;
  /** Checked by the caller (rails/chain/hd-addresses.ts, AccountKey.parse) */
  evmAccountKey?: string | null;
}

/** Every asset/network pair Tessera supports: the default for a new store. */
export function allCurrencyPairs(): StoreCurrency[] {
  return listAssets('crypto').flatMap((a) => a.networks.map((n) => ({ currency: a.code, network: n.code })));
}

export class StoresService {
  constructor(
    private readonly clock: Clock,
    private readonly encryptor: Encryptor,
    private readonly mode: 'sandbox' | 'production',
  ) {}

  async create(db: Executor, input: StoreInput & { name: string }): Promise<CreatedStore> {
    const currencies = validateCurrencies(input.currencies ?? allCurrencyPairs());
    const id = newId('store');
    const clientId = `cli_${randomAlphanumeric(24)}`;
    const clientSecret = `cs_${randomAlphanumeric(40)}`;
    // The public service's secrets look like u_test_webhooks_<uuid> (docs/wire-compatibility.md test vectors).
    const webhookSecret = `${this.mode === 'sandbox' ? 'u_test' : 'u_live'}_webhooks_${randomUUID()}`;
    const now = this.clock.now();
    const row = await db
      .insertInto('stores')
      .values({
        id,
        name: input.name,
        client_id: clientId,
        client_secret_hash: hashToken(clientSecret),
        webhook_secret_enc: this.encryptor.encrypt(webhookSecret, `store:${id}`),
        webhook_url: input.webhookUrl ?? null,
        refunds_enabled: input.refundsEnabled ?? true,
        currencies: JSON.stringify(currencies),
        frame_ancestors: input.frameAncestors ?? [],
        brand: JSON.stringify(input.brand ?? {}),
        evm_account_key: input.evmAccountKey ?? null,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { ...toStore(row), clientSecret, webhookSecret };
  }

  async update(db: Executor, id: string, input: StoreInput): Promise<Store> {
    const row = await db
      .updateTable('stores')
      .set({
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.webhookUrl !== undefined ? { webhook_url: input.webhookUrl } : {}),
        ...(input.refundsEnabled !== undefined ? { refunds_enabled: input.refundsEnabled } : {}),
        ...(input.frameAncestors !== undefined ? { frame_ancestors: input.frameAncestors } : {}),
        ...(input.brand !== undefined ? { brand: JSON.stringify(input.brand) } : {}),
        ...(input.evmAccountKey !== undefined ? { evm_account_key: input.evmAccountKey } : {}),
        ...(input.currencies !== undefined
          ? { currencies: JSON.stringify(validateCurrencies(input.currencies)) }
          : {}),
        updated_at: this.clock.now(),
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw notFound('store');
    return toStore(row);
  }

  async get(db: Executor, id: string): Promise<Store> {
    const row = await db.selectFrom('stores').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw notFound('store');
    return toStore(row);
  }

  async list(db: Executor): Promise<Store[]> {
    return (await db.selectFrom('stores').selectAll().orderBy('created_at').execute()).map(toStore);
  }

  /** The store these client credentials belong to, or undefined (answered as 401 by the session route). */
  async findByClientCredentials(
    db: Executor,
    clientId: string,
    clientSecret: string,
  ): Promise<Store | undefined> {
    const row = await db
      .selectFrom('stores')
      .selectAll()
      .where('client_id', '=', clientId)
      .where('client_secret_hash', '=', hashToken(clientSecret))
      .executeTakeFirst();
    return row ? toStore(row) : undefined;
  }

  async webhookSecret(db: Executor, id: string): Promise<string> {
    const row = await db
      .selectFrom('stores')
      .select('webhook_secret_enc')
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound('store');
    return this.encryptor.decrypt(row.webhook_secret_enc, `store:${id}`);
  }
}

function validateCurrencies(currencies: StoreCurrency[]): StoreCurrency[] {
  const seen = new Set<string>();
  currencies.forEach((pair, index) => {
    if (!findNetwork(pair.currency, pair.network)) {
      throw new DomainError(
        'validation_failed',
        `${pair.currency} on ${pair.network} is not a supported pair`,
        {
          field: `currencies[${index}]`,
        },
      );
    }
    seen.add(`${pair.currency}:${pair.network}`);
  });
  return [...seen].map((key) => {
    const [currency = '', network = ''] = key.split(':');
    return { currency, network };
  });
}

function toStore(row: {
  id: string;
  name: string;
  client_id: string;
  webhook_url: string | null;
  refunds_enabled: boolean;
  currencies: StoreCurrency[];
  frame_ancestors: string[];
  brand: unknown;
  evm_account_key: string | null;
  created_at: Date;
}): Store {
  return {
    id: row.id,
    name: row.name,
    clientId: row.client_id,
    webhookUrl: row.webhook_url,
    refundsEnabled: row.refunds_enabled,
    currencies: row.currencies,
    frameAncestors: row.frame_ancestors,
    brand: brandOf(row.brand),
    evmAccountKey: row.evm_account_key,
    createdAt: row.created_at,
  };
}
