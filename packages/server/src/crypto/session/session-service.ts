// Store sessions (docs/crypto.md, Authentication): client_id + client_secret are exchanged for
// an API key, `u_test_` + 24 characters in sandbox mode and `u_live_` + 24 in production, stored as
// SHA-256 and shown once. A new key leaves the older ones working unless the store asks to revoke them
// (a rolling deploy keeps its old key until the new one is in place).
import type { Clock } from '../../platform/clock/clock.ts';
import { hashToken, randomAlphanumeric } from '../../platform/crypto/hashing.ts';
import type { Db } from '../../platform/db/database.ts';
import type { Transact } from '../../platform/db/transact.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import { newId } from '../../platform/ids.ts';
import type { Store, StoresService } from '../../platform/tenants/stores-service.ts';
import { tenantChangeSettled } from '../../platform/tenants/tenant-changes.ts';

export interface SessionDeps {
  db: Db;
  transact: Transact;
  clock: Clock;
  stores: StoresService;
  mode: 'sandbox' | 'production';
}

const KEY_SHAPE = /^u_(test|live)_[A-Za-z0-9]{24}$/;

export class SessionService {
  private readonly keyMode: 'test' | 'live';

  constructor(private readonly deps: SessionDeps) {
    this.keyMode = deps.mode === 'sandbox' ? 'test' : 'live';
  }

  async open(input: {
    clientId: string;
    clientSecret: string;
    revokeOthers: boolean;
  }): Promise<{ key: string; keyId: string }> {
    const store = await this.deps.stores.findByClientCredentials(
      this.deps.db,
      input.clientId,
      input.clientSecret,
    );
    if (!store) throw new DomainError('unauthenticated', 'invalid client credentials');
    return this.issueKey(store.id, input.revokeOthers);
  }

  /** A new session key for a store (the console's "create key" too), optionally revoking the others. */
  async issueKey(storeId: string, revokeOthers = false): Promise<{ key: string; keyId: string }> {
    const key = `u_${this.keyMode}_${randomAlphanumeric(24)}`;
    const keyId = newId('cryptoApiKey');
    const now = this.deps.clock.now();
    await this.deps.transact(async (tx) => {
      if (revokeOthers) {
        await tx
          .updateTable('crypto_api_keys')
          .set({ revoked_at: now })
          .where('store_id', '=', storeId)
          .where('revoked_at', 'is', null)
          .execute();
      }
      await tx
        .insertInto('crypto_api_keys')
        .values({
          id: keyId,
          store_id: storeId,
          key_hash: hashToken(key),
          mode: this.keyMode,
          created_at: now,
        })
        .execute();
    });
    if (revokeOthers) await tenantChangeSettled(this.deps.db);
    return { key, keyId };
  }

  /** Revokes one of a store's keys: the next request with it is refused. */
  async revokeKey(storeId: string, keyId: string): Promise<void> {
    const result = await this.deps.db
      .updateTable('crypto_api_keys')
      .set({ revoked_at: this.deps.clock.now() })
      .where('id', '=', keyId)
      .where('store_id', '=', storeId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n) throw notFound('active key');
    // Answered once every process refuses the key.
    await tenantChangeSettled(this.deps.db);
  }

  /** The store a bearer key belongs to; a key of the other mode, revoked or unknown is undefined. */
  async authenticate(key: string): Promise<Store | undefined> {
    const shape = KEY_SHAPE.exec(key);
    if (!shape || shape[1] !== this.keyMode) return undefined;
    const row = await this.deps.db
      .selectFrom('crypto_api_keys')
      .select('store_id')
      .where('key_hash', '=', hashToken(key))
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return row ? this.deps.stores.get(this.deps.db, row.store_id) : undefined;
  }
}
