// Merchants of the payments API: the API private key is a JWT (payments spec, Authentication) signed
// with a key derived from the encryption key; its hash is stored so a key can be revoked, and a
// tampered or revoked key is refused. Each site has its own IPN URL and a secret key of 32 characters,
// shown as `sk_<env>_<key>` with its public key `pk_<env>_<siteId>` (the real service's clients are
// configured with these): the key is at once a Bearer credential for that site, the key of the hosted
// checkout's checksum and the AES-256 key of IPN and result payloads. Rotation keeps the previous key
// valid for an overlap, for the Bearer and the checksum; payloads are encrypted with the newest key.
import { randomUUID } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import type { Selectable } from 'kysely';
import type { Clock } from '../clock/clock.ts';
import type { Encryptor } from '../crypto/encryption.ts';
import { hashToken, randomAlphanumeric } from '../crypto/hashing.ts';
import type { Executor } from '../db/database.ts';
import type { SitesTable } from '../db/schema.ts';
import { DomainError, notFound } from '../errors/domain-error.ts';
import { type Brand, brandOf } from './brand.ts';

const ISSUER = 'tessera';
const AUDIENCE = 'tessera-payments';

export interface Site {
  id: number;
  name: string;
  /** `pk_<env>_<siteId>`: names the site in hosted checkout forms */
  publicKey: string;
  ipnUrl: string | null;
  /** Origins allowed to embed the site's hosted checkout (empty: none) */
  frameAncestors: string[];
  /** What its hosted pages show of it */
  brand: Brand;
  /** Its merchant category code (ISO 18245) and country (ISO 3166 alpha-2), sent with its authorizations */
  mcc: string | null;
  country: string | null;
}

/** What may be set of a site beside its keys */
export interface SiteSettings {
  name?: string;
  ipnUrl?: string | null;
  frameAncestors?: string[];
  brand?: Brand;
  mcc?: string | null;
  country?: string | null;
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
  sites: (Site & SecretKeyShown)[];
}

/** A site's secret key as shown once, at creation or rotation. */
export interface SecretKeyShown {
  /** `sk_<env>_<key>`, as the real service's clients are configured */
  secretKey: string;
  /** The key alone: the IPN secret of earlier Tessera versions */
  ipnSecret: string;
}

export type KeyEnvironment = 'test' | 'live';

const SITE_COLUMNS = ['id', 'name', 'ipn_url', 'frame_ancestors', 'brand', 'mcc', 'country'] as const;
type SiteRow = Pick<Selectable<SitesTable>, (typeof SITE_COLUMNS)[number]>;
const SECRET_KEY = /^(?:sk_(test|live)_)?([A-Za-z0-9]{32})$/;

export class MerchantsService {
  constructor(
    private readonly clock: Clock,
    private readonly encryptor: Encryptor,
    private readonly jwtKey: Uint8Array,
    /** `test` in the sandbox, `live` in production: the middle of the `sk_` and `pk_` keys */
    private readonly environment: KeyEnvironment,
  ) {}

  publicKeyOf(siteId: number): string {
    return `pk_${this.environment}_${siteId}`;
  }

  /** The site a `pk_<env>_<siteId>` names, or undefined when it is not this environment's form. */
  siteOfPublicKey(publicKey: string): number | undefined {
    const match = new RegExp(`^pk_${this.environment}_([1-9][0-9]{0,9})$`).exec(publicKey);
    return match ? Number(match[1]) : undefined;
  }

  private shown(key: string): SecretKeyShown {
    return { secretKey: `sk_${this.environment}_${key}`, ipnSecret: key };
  }

  async create(
    db: Executor,
    input: {
      name: string;
      sites: (SiteSettings & { name: string })[];
    },
  ): Promise<CreatedMerchant> {
    const now = this.clock.now();
    const merchant = await db
      .insertInto('merchants')
      .values({ name: input.name, created_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
    const sites: CreatedMerchant['sites'] = [];
    for (const site of input.sites) {
      const key = randomAlphanumeric(32);
      const row = await db
        .insertInto('sites')
        .values({
          merchant_id: merchant.id,
          name: site.name,
          ipn_url: site.ipnUrl ?? null,
          secret_key_enc: 'pending',
          secret_key_hash: hashToken(key),
          frame_ancestors: site.frameAncestors ?? [],
          brand: JSON.stringify(site.brand ?? {}),
          mcc: site.mcc ?? null,
          country: site.country ?? null,
          created_at: now,
        })
        .returning(['id'])
        .executeTakeFirstOrThrow();
      // The ciphertext is bound to the site id, which exists only after the insert.
      await db
        .updateTable('sites')
        .set({ secret_key_enc: this.encryptor.encrypt(key, `site:${row.id}`) })
        .where('id', '=', row.id)
        .execute();
      sites.push({
        id: row.id,
        name: site.name,
        publicKey: this.publicKeyOf(row.id),
        ipnUrl: site.ipnUrl ?? null,
        frameAncestors: site.frameAncestors ?? [],
        brand: site.brand ?? {},
        mcc: site.mcc ?? null,
        country: site.country ?? null,
        ...this.shown(key),
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
      .select(SITE_COLUMNS)
      .where('merchant_id', '=', id)
      .orderBy('id')
      .execute();
    return {
      id: merchant.id,
      name: merchant.name,
      createdAt: merchant.created_at,
      sites: sites.map((s) => this.siteOf(s)),
    };
  }

  async list(db: Executor): Promise<Merchant[]> {
    const ids = await db.selectFrom('merchants').select('id').orderBy('id').execute();
    return Promise.all(ids.map((m) => this.get(db, m.id)));
  }

  async updateSite(db: Executor, merchantId: number, siteId: number, input: SiteSettings): Promise<Site> {
    const changes = {
      ...(input.mcc !== undefined ? { mcc: input.mcc } : {}),
      ...(input.country !== undefined ? { country: input.country } : {}),
      ...(input.ipnUrl !== undefined ? { ipn_url: input.ipnUrl } : {}),
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.frameAncestors !== undefined ? { frame_ancestors: input.frameAncestors } : {}),
      ...(input.brand !== undefined ? { brand: JSON.stringify(input.brand) } : {}),
    };
    // Nothing to change answers the site as it is.
    const row =
      Object.keys(changes).length === 0
        ? await db
            .selectFrom('sites')
            .select(SITE_COLUMNS)
            .where('id', '=', siteId)
            .where('merchant_id', '=', merchantId)
            .executeTakeFirst()
        : await db
            .updateTable('sites')
            .set(changes)
            .where('id', '=', siteId)
            .where('merchant_id', '=', merchantId)
            .returning(SITE_COLUMNS)
            .executeTakeFirst();
    if (!row) throw notFound('site');
    return this.siteOf(row);
  }

  private siteOf(row: SiteRow): Site {
    return {
      id: row.id,
      name: row.name,
      publicKey: this.publicKeyOf(row.id),
      ipnUrl: row.ipn_url,
      frameAncestors: row.frame_ancestors,
      brand: brandOf(row.brand),
      mcc: row.mcc,
      country: row.country,
    };
  }

  /** What a site's hosted pages show of it: its brand, with the site's name when the brand has none. */
  async brandOf(db: Executor, siteId: number): Promise<Brand> {
    const row = await db
      .selectFrom('sites')
      .select(['name', 'brand'])
      .where('id', '=', siteId)
      .executeTakeFirst();
    return row ? { name: row.name, ...brandOf(row.brand) } : {};
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

  /** The key IPN and result payloads of the site are encrypted with: its newest secret key. */
  async ipnSecret(db: Executor, siteId: number): Promise<string> {
    const row = await db
      .selectFrom('sites')
      .select('secret_key_enc')
      .where('id', '=', siteId)
      .executeTakeFirst();
    if (!row) throw notFound('site');
    return this.encryptor.decrypt(row.secret_key_enc, `site:${siteId}`);
  }

  /**
   * The keys a checksum of the site may be made with: the newest, and the previous one in its overlap,
   * each in both forms of the same secret: the 32 characters (what api-sdk and the shop plugins sign
   * with) and the whole `sk_<env>_…` string (what xmoney-node's checkout.createHosted signs with).
   */
  async checksumKeys(
    db: Executor,
    siteId: number,
  ): Promise<{ merchantId: number; keys: string[] } | undefined> {
    const row = await db
      .selectFrom('sites')
      .select(['merchant_id', 'secret_key_enc', 'previous_secret_key_enc', 'previous_secret_key_until'])
      .where('id', '=', siteId)
      .executeTakeFirst();
    if (!row) return undefined;
    const keys = [this.encryptor.decrypt(row.secret_key_enc, `site:${siteId}`)];
    if (
      row.previous_secret_key_enc &&
      row.previous_secret_key_until &&
      row.previous_secret_key_until > this.clock.now()
    ) {
      keys.push(this.encryptor.decrypt(row.previous_secret_key_enc, `site:${siteId}`));
    }
    return {
      merchantId: row.merchant_id,
      keys: keys.flatMap((key) => [key, `sk_${this.environment}_${key}`]),
    };
  }

  /**
   * The site a secret key (`sk_<env>_<key>` or the key alone, as the real service's SDK sends it) stands
   * for, and until when when it is a previous key in its overlap; undefined when it is unknown, of the
   * other environment, or a previous key past its overlap.
   */
  async authenticateSecretKey(
    db: Executor,
    credential: string,
  ): Promise<{ merchantId: number; siteId: number; validUntil: Date | null } | undefined> {
    const match = SECRET_KEY.exec(credential);
    if (!match?.[2] || (match[1] !== undefined && match[1] !== this.environment)) return undefined;
    const hash = hashToken(match[2]);
    const row = await db
      .selectFrom('sites')
      .select(['id', 'merchant_id', 'secret_key_hash', 'previous_secret_key_until'])
      .where((eb) =>
        eb.or([
          eb('secret_key_hash', '=', hash),
          eb.and([
            eb('previous_secret_key_hash', '=', hash),
            eb('previous_secret_key_until', '>', this.clock.now()),
          ]),
        ]),
      )
      .executeTakeFirst();
    if (!row) return undefined;
    const isPrevious = row.secret_key_hash !== hash;
    return {
      merchantId: row.merchant_id,
      siteId: row.id,
      validUntil: isPrevious ? row.previous_secret_key_until : null,
    };
  }

  /**
   * A new secret key for the site. The previous one stays valid as a Bearer credential and checksum key
   * for `overlapSeconds` (0: not at all), so a merchant can deploy the new key without downtime; IPN and
   * result payloads are encrypted with the new key at once.
   */
  async rotateSecretKey(
    db: Executor,
    merchantId: number,
    siteId: number,
    overlapSeconds: number,
  ): Promise<SecretKeyShown & { siteId: number; publicKey: string; previousKeyValidUntil: Date | null }> {
    const site = await db
      .selectFrom('sites')
      .select(['secret_key_enc', 'secret_key_hash'])
      .where('id', '=', siteId)
      .where('merchant_id', '=', merchantId)
      .forUpdate()
      .executeTakeFirst();
    if (!site) throw notFound('site');
    if (!site.secret_key_hash)
      throw new DomainError('conflict', 'the site’s key is being upgraded: try again');
    const key = randomAlphanumeric(32);
    const until = overlapSeconds > 0 ? new Date(this.clock.now().getTime() + overlapSeconds * 1000) : null;
    await db
      .updateTable('sites')
      .set({
        secret_key_enc: this.encryptor.encrypt(key, `site:${siteId}`),
        secret_key_hash: hashToken(key),
        previous_secret_key_enc: until ? site.secret_key_enc : null,
        previous_secret_key_hash: until ? site.secret_key_hash : null,
        previous_secret_key_until: until,
      })
      .where('id', '=', siteId)
      .execute();
    return { siteId, publicKey: this.publicKeyOf(siteId), ...this.shown(key), previousKeyValidUntil: until };
  }

  /**
   * Sites made before secret keys were Bearer credentials have no key hash; only the server can decrypt
   * the key to compute it, so it does at start (idempotent, one statement per such site).
   */
  async backfillSecretKeyHashes(db: Executor): Promise<number> {
    const rows = await db
      .selectFrom('sites')
      .select(['id', 'secret_key_enc'])
      .where('secret_key_hash', 'is', null)
      .execute();
    for (const row of rows) {
      const key = this.encryptor.decrypt(row.secret_key_enc, `site:${row.id}`);
      await db
        .updateTable('sites')
        .set({ secret_key_hash: hashToken(key) })
        .where('id', '=', row.id)
        .where('secret_key_hash', 'is', null)
        .execute();
    }
    return rows.length;
  }
}
