// Answers the webhook engine's questions about tenants from the three tenant services. Webhook URLs are
// asked for every event written, so they are remembered until any tenant changes (tenant-cache.ts).
import type { Executor } from '../db/database.ts';
import type { WebhookApi } from '../db/schema.ts';
import type { WebhookTenantDirectory } from '../webhooks/tenant-directory.ts';
import type { MerchantsService } from './merchants-service.ts';
import type { PartnersService } from './partners-service.ts';
import type { StoresService } from './stores-service.ts';
import type { TenantCache } from './tenant-cache.ts';

export class TenantDirectory implements WebhookTenantDirectory {
  constructor(
    private readonly partners: PartnersService,
    private readonly merchants: MerchantsService,
    private readonly stores: StoresService,
    private readonly cache: TenantCache,
  ) {}

  async webhookUrl(db: Executor, api: WebhookApi, tenantId: string): Promise<string | null> {
    const url = await this.cache.get(`webhook-url:${api}:${tenantId}`, async () => ({
      value: await this.configuredUrl(db, api, tenantId),
    }));
    return url ?? null;
  }

  private async configuredUrl(db: Executor, api: WebhookApi, tenantId: string): Promise<string | null> {
    switch (api) {
      case 'issuing':
        return (await this.partners.get(db, tenantId)).webhookUrl;
      case 'crypto':
        return (await this.stores.get(db, tenantId)).webhookUrl;
      case 'payments': {
        const row = await db
          .selectFrom('sites')
          .select('ipn_url')
          .where('id', '=', Number(tenantId))
          .executeTakeFirst();
        return row?.ipn_url ?? null;
      }
    }
  }

  async redeliversWhenBack(db: Executor, api: WebhookApi, tenantId: string): Promise<boolean> {
    if (api !== 'issuing') return false;
    const waits = await this.cache.get(`webhook-waits:${api}:${tenantId}`, async () => ({
      value: (await this.partners.get(db, tenantId)).webhookRedeliverWhenBack,
    }));
    return waits ?? true;
  }

  async signingSecret(db: Executor, api: WebhookApi, tenantId: string): Promise<string> {
    switch (api) {
      case 'issuing':
        return this.partners.signingKey(db, tenantId);
      case 'crypto':
        return this.stores.webhookSecret(db, tenantId);
      case 'payments':
        return this.merchants.ipnSecret(db, Number(tenantId));
    }
  }
}
