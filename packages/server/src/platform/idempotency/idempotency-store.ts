// Idempotency keys (docs/architecture.md, Idempotency keys). A keyed request runs as one unit of work: its transaction takes
// a transaction-scoped advisory lock on the key, runs the request, and writes the key's row with the
// answer before it commits. So a key's row exists exactly when the request's effect does; a process
// that dies mid-request takes its lock and its uncommitted effect with it, and the retry runs afresh.
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Clock } from '../clock/clock.ts';
import { addSeconds } from '../clock/clock.ts';
import type { Encryptor } from '../crypto/encryption.ts';
import type { UnitOfWork } from '../db/connection-scope.ts';
import type { Db } from '../db/database.ts';

/** How long an answer is replayed (default: 24 h, as Stripe) */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
/** How long a used key is refused for another run after its answer is gone (30 days in all) */
export const IDEMPOTENCY_RETENTION_SECONDS = 30 * 24 * 60 * 60;

export interface StoredAnswer {
  status: number;
  contentType: string;
  body: string;
}

export type BeginResult =
  | { outcome: 'run'; unit: UnitOfWork }
  | ({ outcome: 'replay' } & StoredAnswer)
  | { outcome: 'mismatch' }
  | { outcome: 'in_progress' }
  | { outcome: 'expired'; usedAt: Date; status: number };

export interface IdempotencyClaim {
  scope: string;
  key: string;
  requestHash: string;
}

export class IdempotencyStore {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly encryptor: Encryptor,
    private readonly createUnit: () => UnitOfWork,
  ) {}

  /**
   * Opens the request's unit of work holding the key's lock, or tells why the request must not run:
   * another request holds the key now, or the key was used (replay, mismatch, or its answer expired).
   */
  async begin(claim: IdempotencyClaim): Promise<BeginResult> {
    const unit = this.createUnit();
    await unit.begin();
    try {
      const result = await unit.run(() => this.decide(claim, unit));
      if (result.outcome !== 'run') await unit.finish('rollback');
      return result;
    } catch (err) {
      await unit.finish('rollback');
      throw err;
    }
  }

  private async decide(claim: IdempotencyClaim, unit: UnitOfWork): Promise<BeginResult> {
    const { rows } = await sql<{ locked: boolean }>`
      SELECT pg_try_advisory_xact_lock(hashtextextended(${`${claim.scope}\n${claim.key}`}, 0)) AS locked
    `.execute(this.db);
    if (!rows[0]?.locked) return { outcome: 'in_progress' };
    // A new statement, so a new snapshot: it sees the row of a request that committed just before the
    // lock was ours (a commit is visible before its locks are released).
    const existing = await this.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('scope', '=', claim.scope)
      .where('key', '=', claim.key)
      .executeTakeFirst();
    const now = this.clock.now();
    if (!existing) return { outcome: 'run', unit };
    if (existing.retain_until <= now) {
      await this.db
        .deleteFrom('idempotency_keys')
        .where('scope', '=', claim.scope)
        .where('key', '=', claim.key)
        .execute();
      return { outcome: 'run', unit };
    }
    if (existing.request_hash !== claim.requestHash) return { outcome: 'mismatch' };
    if (existing.expires_at <= now || existing.response_body_enc === null) {
      return { outcome: 'expired', usedAt: existing.created_at, status: existing.response_status };
    }
    return {
      outcome: 'replay',
      status: existing.response_status,
      contentType: existing.response_content_type,
      body: this.encryptor.decrypt(existing.response_body_enc, associatedData(claim)),
    };
  }

  /** Writes the key's row with its answer inside the unit, which the caller then commits. */
  async record(unit: UnitOfWork, claim: IdempotencyClaim, answer: StoredAnswer): Promise<void> {
    const now = this.clock.now();
    // Straight on the unit's transaction: if this insert fails, the whole unit rolls back anyway.
    await unit.execute(
      this.db
        .insertInto('idempotency_keys')
        .values({
          scope: claim.scope,
          key: claim.key,
          request_hash: claim.requestHash,
          response_status: answer.status,
          response_content_type: answer.contentType,
          response_body_enc: this.encryptor.encrypt(answer.body, associatedData(claim)),
          created_at: now,
          expires_at: addSeconds(now, IDEMPOTENCY_TTL_SECONDS),
          retain_until: addSeconds(now, IDEMPOTENCY_RETENTION_SECONDS),
        })
        .compile(),
    );
  }

  /** Drops answers past their replay window, and tombstones past their retention. */
  async purgeExpired(): Promise<number> {
    const now = this.clock.now();
    const purged = await this.db
      .updateTable('idempotency_keys')
      .set({ response_body_enc: null })
      .where('expires_at', '<=', now)
      .where('response_body_enc', 'is not', null)
      .executeTakeFirst();
    const deleted = await this.db
      .deleteFrom('idempotency_keys')
      .where('retain_until', '<=', now)
      .executeTakeFirst();
    return Number(purged.numUpdatedRows) + Number(deleted.numDeletedRows);
  }
}

const associatedData = (claim: IdempotencyClaim) => `idempotency:${claim.scope}\n${claim.key}`;

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
