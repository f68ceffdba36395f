// Merchants of the payments API: the API private key is a JWT (payments spec, Authentication) signed
// with a key derived from the encryption key; its hash is stored so a key can be revoked, and a
// tampered or revoked key is refused. Each site has its own IPN URL and 32-character IPN secret.
import { randomUUID } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import type { Clock } from '../clock/clock.ts';
import type { Encryptor } from '../crypto/encryption.ts';
import { hashToken, randomAlphanumeric } from '../crypto/hashing.ts';
import type { Executor } from '../db/database.ts';
import { notFound } from '../errors/domain-error.ts';

const ISSUER = 'tessera';
const AUDIENCE = 'tessera-payments';

export interface Site {
  id: number;
  name: string;
  ipnUrl: string | null;
  /** Origins allowed to embed the site's hosted checkout (empty: none) */
  frameAncestors: string[];
}

export interface Merchant {
  id: number;
  name: string;
  createdAt: Date;
  sites: Site[];
}

export interface CreatedMerchant extends Omit<Merchant, 'sites'> {
  apiKey: string;
  apiKeyId: string;
  sites: (Site & { ipnSecret: string })[];
}

export class MerchantsService {
  constructor(
    private readonly clock: Clock,
    private readonly encryptor: Encryptor,
    private readonly jwtKey: Uint8Array,
  ) {}

  async create(
    db: Executor,
    input: { name: string; sites: { name: string; ipnUrl?: string | null; frameAncestors?: string[] }[] },
  ): Promise<CreatedMerchant> {
    const now = this.clock.now();
    const merchant = await db
      .insertInto('merchants')
      .values({ name: input.name, created_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
    const sites: CreatedMerchant['sites'] = [];
    for (const site of input.sites) {
      const ipnSecret = randomAlphanumeric(32);
      const row = await db
        .insertInto('sites')
        .values({
          merchant_id: merchant.id,
          name: site.name,
          ipn_url: site.ipnUrl ?? null,
          ipn_secret_enc: 'pending',
          frame_ancestors: site.frameAncestors ?? [],
          created_at: now,
        })
        .returning(['id'])
        .executeTakeFirstOrThrow();
      // The ciphertext is bound to the site id, which exists only after the insert.
      await db
        .updateTable('sites')
        .set({ ipn_secret_enc: this.encryptor.encrypt(ipnSecret, `site:${row.id}`) })
        .where('id', '=', row.id)
        .execute();
      sites.push({
        id: row.id,
        name: site.name,
        ipnUrl: site.ipnUrl ?? null,
        frameAncestors: site.frameAncestors ?? [],
        ipnSecret,
      });
    }
    const { apiKey, apiKeyId } = await this.issueApiKey(db, merchant.id);
    return { id: merchant.id, name: merchant.name, createdAt: merchant.created_at, apiKey, apiKeyId, sites };
  }

  /** A new API private key; older keys stay valid until revoked. */
  async issueApiKey(db: Executor, merchantId: number): Promise<{ apiKey: string; apiKeyId: string }> {
    const apiKeyId = randomUUID();
    const apiKey = await new SignJWT({ mid: merchantId })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject(`merchant:${merchantId}`)
      .setJti(apiKeyId)
      .setIssuedAt(Math.floor(this.clock.now().getTime() / 1000))
      .sign(this.jwtKey);
    await db
      .insertInto('merchant_api_keys')
      .values({
        id: apiKeyId,
        merchant_id: merchantId,
        key_hash: hashToken(apiKey),
        created_at: this.clock.now(),
      })
      .execute();
    return { apiKey, apiKeyId };
  }

  async revokeApiKey(db: Executor, merchantId: number, apiKeyId: string): Promise<void> {
    const result = await db
      .updateTable('merchant_api_keys')
      .set({ revoked_at: this.clock.now() })
      .where('id', '=', apiKeyId)
      .where('merchant_id', '=', merchantId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n) throw notFound('active API key');
  }

  /** The merchant id a bearer key stands for, or undefined when the key is tampered, unknown or revoked. */
  async authenticate(
    db: Executor,
    apiKey: string,
  ): Promise<{ merchantId: number; apiKeyId: string } | undefined> {
    let payload: { jti?: unknown; mid?: unknown };
    try {
      // No expiry check: API private keys live until revoked (as the service's do).
      ({ payload } = await jwtVerify(apiKey, this.jwtKey, {
        issuer: ISSUER,
        audience: AUDIENCE,
        algorithms: ['HS256'],
      }));
    } catch {
      return undefined;
    }
    if (typeof payload.jti !== 'string' || typeof payload.mid !== 'number') return undefined;
    // Outside the try: a database failure is a 5xx to retry, never a 401 that tells the caller its key is bad.
    const row = await db
      .selectFrom('merchant_api_keys')
      .select(['merchant_id', 'revoked_at'])
      .where('id', '=', payload.jti)
      .where('key_hash', '=', hashToken(apiKey))
      .executeTakeFirst();
    if (!row || row.revoked_at !== null || row.merchant_id !== payload.mid) return undefined;
    return { merchantId: row.merchant_id, apiKeyId: payload.jti };
  }

  async get(db: Executor, id: number): Promise<Merchant> {
    const merchant = await db.selectFrom('merchants').selectAll().where('id', '=', id).executeTakeFirst();
    if (!merchant) throw notFound('merchant');
    const sites = await db
      .selectFrom('sites')
      .select(['id', 'name', 'ipn_url', 'frame_ancestors'])
      .where('merchant_id', '=', id)
      .orderBy('id')
      .execute();
    return {
      id: merchant.id,
      name: merchant.name,
      createdAt: merchant.created_at,
      sites: sites.map((s) => ({
        id: s.id,
        name: s.name,
        ipnUrl: s.ipn_url,
        frameAncestors: s.frame_ancestors,
      })),
    };
  }

  async list(db: Executor): Promise<Merchant[]> {
    const ids = await db.selectFrom('merchants').select('id').orderBy('id').execute();
    return Promise.all(ids.map((m) => this.get(db, m.id)));
  }

  async updateSite(
    db: Executor,
    merchantId: number,
    siteId: number,
    input: { ipnUrl?: string | null; name?: string; frameAncestors?: string[] },
  ): Promise<Site> {
    const changes = {
      ...(input.ipnUrl !== undefined ? { ipn_url: input.ipnUrl } : {}),
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.frameAncestors !== undefined ? { frame_ancestors: input.frameAncestors } : {}),
    };
    // Nothing to change answers the site as it is.
    const row =
      Object.keys(changes).length === 0
        ? await db
            .selectFrom('sites')
            .select(['id', 'name', 'ipn_url', 'frame_ancestors'])
            .where('id', '=', siteId)
            .where('merchant_id', '=', merchantId)
            .executeTakeFirst()
        : await db
            .updateTable('sites')
            .set(changes)
            .where('id', '=', siteId)
            .where('merchant_id', '=', merchantId)
            .returning(['id', 'name', 'ipn_url', 'frame_ancestors'])
            .executeTakeFirst();
    if (!row) throw notFound('site');
    return { id: row.id, name: row.name, ipnUrl: row.ipn_url, frameAncestors: row.frame_ancestors };
  }

  /** The origins allowed to embed a site's hosted pages (none for an unknown site). */
  async frameAncestors(db: Executor, siteId: number): Promise<string[]> {
    const row = await db
      .selectFrom('sites')
      .select('frame_ancestors')
      .where('id', '=', siteId)
      .executeTakeFirst();
    return row?.frame_ancestors ?? [];
  }

  async ipnSecret(db: Executor, siteId: number): Promise<string> {
    const row = await db
      .selectFrom('sites')
      .select('ipn_secret_enc')
      .where('id', '=', siteId)
      .executeTakeFirst();
    if (!row) throw notFound('site');
    return this.encryptor.decrypt(row.ipn_secret_enc, `site:${siteId}`);
  }
}
