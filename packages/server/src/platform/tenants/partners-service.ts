// Partners of the card issuing API (docs/architecture.md): partnerId, API key (hashed, shown once),
// webhook signing key (encrypted: it must be usable to sign) and webhook URL.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock/clock.ts';
import type { Encryptor } from '../crypto/encryption.ts';
import { hashToken, randomAlphanumeric, randomToken } from '../crypto/hashing.ts';
import type { Executor } from '../db/database.ts';
import { notFound } from '../errors/domain-error.ts';
import { isUuid, newId } from '../ids.ts';

export interface Partner {
  id: string;
  partnerId: string;
  name: string;
  webhookUrl: string | null;
  /**
   * After the issuing spec's three attempts fail, an event waits and is delivered when the endpoint
   * answers again (docs/webhooks.md; default: true). False: it fails for good, as the spec says.
   */
  webhookRedeliverWhenBack: boolean;
  createdAt: Date;
}

export interface CreatedPartner extends Partner {
  /** Shown once; only its hash is stored */
  apiKey: string;
  /** Shown once to the operator; stored encrypted because signing needs it */
  webhookSigningKey: string;
}

type PartnerRow = {
  id: string;
  partner_id: string;
  name: string;
  webhook_url: string | null;
  webhook_redeliver_when_back: boolean;
  created_at: Date;
};

export class PartnersService {
  constructor(
    private readonly clock: Clock,
    private readonly encryptor: Encryptor,
  ) {}

  async create(
    db: Executor,
    input: { name: string; webhookUrl?: string | null; webhookRedeliverWhenBack?: boolean },
  ): Promise<CreatedPartner> {
    const apiKey = `ptk_${randomAlphanumeric(40)}`;
    const webhookSigningKey = randomToken('whsk_', 36);
    const id = newId('partner');
    const now = this.clock.now();
    const row = await db
      .insertInto('partners')
      .values({
        id,
        partner_id: randomUUID(),
        name: input.name,
        api_key_hash: hashToken(apiKey),
        webhook_signing_key_enc: this.encryptor.encrypt(webhookSigningKey, `partner:${id}`),
        webhook_url: input.webhookUrl ?? null,
        webhook_redeliver_when_back: input.webhookRedeliverWhenBack ?? true,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { ...toPartner(row), apiKey, webhookSigningKey };
  }

  async update(
    db: Executor,
    id: string,
    input: { webhookUrl?: string | null; name?: string; webhookRedeliverWhenBack?: boolean },
  ): Promise<Partner> {
    const row = await db
      .updateTable('partners')
      .set({
        ...(input.webhookUrl !== undefined ? { webhook_url: input.webhookUrl } : {}),
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.webhookRedeliverWhenBack !== undefined
          ? { webhook_redeliver_when_back: input.webhookRedeliverWhenBack }
          : {}),
        updated_at: this.clock.now(),
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw notFound('partner');
    return toPartner(row);
  }

  async get(db: Executor, id: string): Promise<Partner> {
    const row = await db.selectFrom('partners').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw notFound('partner');
    return toPartner(row);
  }

  async list(db: Executor): Promise<Partner[]> {
    return (await db.selectFrom('partners').selectAll().orderBy('created_at').execute()).map(toPartner);
  }

  /** The partner owning this API key, or undefined (callers answer 401 without saying which part failed). */
  async findByApiKey(db: Executor, apiKey: string): Promise<Partner | undefined> {
    const row = await db
      .selectFrom('partners')
      .selectAll()
      .where('api_key_hash', '=', hashToken(apiKey))
      .executeTakeFirst();
    return row ? toPartner(row) : undefined;
  }

  async findByPartnerId(db: Executor, partnerId: string): Promise<Partner | undefined> {
    if (!isUuid(partnerId)) return undefined;
    const row = await db
      .selectFrom('partners')
      .selectAll()
      .where('partner_id', '=', partnerId)
      .executeTakeFirst();
    return row ? toPartner(row) : undefined;
  }

  async signingKey(db: Executor, id: string): Promise<string> {
    const row = await db
      .selectFrom('partners')
      .select('webhook_signing_key_enc')
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound('partner');
    return this.encryptor.decrypt(row.webhook_signing_key_enc, `partner:${id}`);
  }
}

function toPartner(row: PartnerRow): Partner {
  return {
    id: row.id,
    partnerId: row.partner_id,
    name: row.name,
    webhookUrl: row.webhook_url,
    webhookRedeliverWhenBack: row.webhook_redeliver_when_back,
    createdAt: row.created_at,
  };
}
