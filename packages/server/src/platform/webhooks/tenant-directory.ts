// What the webhook engine needs to know of tenants, without depending on the tenant modules.
import type { Executor } from '../db/database.ts';
import type { WebhookApi } from '../db/schema.ts';

export interface WebhookTenantDirectory {
  /** The tenant's configured endpoint (partner webhook URL, site IPN URL, store webhook URL) */
  webhookUrl(db: Executor, api: WebhookApi, tenantId: string): Promise<string | null>;
  /** Whether the tenant's failed events wait for its endpoint to answer again (issuing partners) */
  redeliversWhenBack(db: Executor, api: WebhookApi, tenantId: string): Promise<boolean>;
  /** The secret the channel signs or encrypts with, decrypted */
  signingSecret(db: Executor, api: WebhookApi, tenantId: string): Promise<string>;
}
