// Idempotency keys (DESIGN principle 4). The key's row is claimed before the handler runs: a unique
// insert decides who owns it, so two concurrent requests with one key never both execute.
import { createHash } from 'node:crypto';
import type { Clock } from '../clock/clock.ts';
import { addSeconds } from '../clock/clock.ts';
import type { Db } from '../db/database.ts';

/** How long a key is remembered (default: 24 h, as Stripe) */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;

export type ClaimResult =
  | { outcome: 'claimed' }
  | { outcome: 'replay'; status: number; contentType: string; body: string }
  | { outcome: 'mismatch' }
  | { outcome: 'in_progress' };

export class IdempotencyStore {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  async claim(scope: string, key: string, requestHash: string): Promise<ClaimResult> {
    const now = this.clock.now();
    // An expired row is removed first so the key can be used afresh.
    await this.db
      .deleteFrom('idempotency_keys')
      .where('scope', '=', scope)
      .where('key', '=', key)
      .where('expires_at', '<=', now)
      .execute();
    const inserted = await this.db
      .insertInto('idempotency_keys')
      .values({
        scope,
        key,
        request_hash: requestHash,
        status: 'in_progress',
        created_at: now,
        expires_at: addSeconds(now, IDEMPOTENCY_TTL_SECONDS),
      })
      .onConflict((oc) => oc.columns(['scope', 'key']).doNothing())
      .returning('key')
      .executeTakeFirst();
    if (inserted) return { outcome: 'claimed' };
    const existing = await this.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('scope', '=', scope)
      .where('key', '=', key)
      .executeTakeFirst();
    if (!existing) return this.claim(scope, key, requestHash);
    if (existing.request_hash !== requestHash) return { outcome: 'mismatch' };
    if (existing.status === 'in_progress') return { outcome: 'in_progress' };
    return {
      outcome: 'replay',
      status: existing.response_status ?? 200,
      contentType: existing.response_content_type ?? 'application/json',
      body: existing.response_body ?? '',
    };
  }

  async complete(
    scope: string,
    key: string,
    response: { status: number; contentType: string; body: string },
  ) {
    await this.db
      .updateTable('idempotency_keys')
      .set({
        status: 'completed',
        response_status: response.status,
        response_content_type: response.contentType,
        response_body: response.body,
      })
      .where('scope', '=', scope)
      .where('key', '=', key)
      .execute();
  }

  /** Frees the key after a server error, so the client's retry runs the request again. */
  async release(scope: string, key: string): Promise<void> {
    await this.db.deleteFrom('idempotency_keys').where('scope', '=', scope).where('key', '=', key).execute();
  }

  async purgeExpired(): Promise<number> {
    const result = await this.db
      .deleteFrom('idempotency_keys')
      .where('expires_at', '<=', this.clock.now())
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

/** Method, path and the parsed body with keys sorted: form and JSON spellings of one request agree. */
export function hashRequest(method: string, url: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${url}\n${stableStringify(body ?? null)}`)
    .digest('hex');
}

function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableStringify(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
