// Idempotency keys (docs/architecture.md, Idempotency keys). A keyed request runs as one unit of work: its transaction takes
// a transaction-scoped advisory lock on the key, runs the request, and writes the key's row with the
// answer before it commits. So a key's row exists exactly when the request's effect does; a process
// that dies mid-request takes its lock and its uncommitted effect with it, and the retry runs afresh.

import { hash } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { sql } from 'kysely';
import type { Clock } from '../clock/clock.ts';
import { addSeconds } from '../clock/clock.ts';
import type { Encryptor } from '../crypto/encryption.ts';
import type { UnitOfWork } from '../db/connection-scope.ts';
import { type Db, pgErrorCode } from '../db/database.ts';
import { preparedStatement } from '../db/prepared.ts';
import type { OnOpen } from '../db/unit-of-work.ts';
import { inSpan } from '../observability/tracing.ts';
import { ANSWER_DICTIONARY_V1 } from './answer-dictionary.ts';

/** How long an answer is replayed (default: 24 h, as Stripe) */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
/** How long a used key is refused for another run, its answer's day included, unless configured (30 days) */
const IDEMPOTENCY_RETENTION_DAYS = 30;
/** Rows a purge changes per statement: a backlog is cleared over several sweeps, never in one long lock */
const PURGE_BATCH = 5_000;

export interface StoredAnswer {
  status: number;
  contentType: string;
  body: string;
}

/** What a key already used answers instead of running its request again. */
export type UsedKey =
  | ({ outcome: 'replay' } & StoredAnswer)
  | { outcome: 'mismatch' }
  | { outcome: 'in_progress' }
  | { outcome: 'expired'; usedAt: Date; status: number };

export interface IdempotencyClaim {
  scope: string;
  key: string;
  /** The key's row's primary key (keyDigest): made once per request */
  digest: string;
  /** The rest of the same SHA-256 (keyDigest), compared with the row's */
  check: Buffer;
  /** The request's SHA-256 (hashRequest): a key sent again with another request is refused */
  requestHash: Buffer;
  /**
   * The route's answer holds only what its rows keep in clear (route config `answerInClear`): stored
   * with its key unencrypted, saving the cipher's set-up on a hot path (docs/architecture.md, Idempotency).
   */
  answerInClear?: boolean;
}

/** Thrown inside a keyed request when its unit opens and finds the key held or used: answer `decision`. */
export class KeyAlreadyUsed extends Error {
  constructor(readonly decision: UsedKey) {
    super(`the Idempotency-Key was ${decision.outcome === 'in_progress' ? 'in use' : 'used'}`);
    this.name = 'KeyAlreadyUsed';
  }
}

export class IdempotencyStore {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly encryptor: Encryptor,
    private readonly createUnit: () => UnitOfWork,
    /**
     * Days a key's row is kept (TESSERA_IDEMPOTENCY_KEY_RETENTION_DAYS; at least 1, the answer's day). A
     * row takes the retention in force when its answer is dropped, at the end of its replay window: a
     * change applies to keys whose window ends after it.
     */
    private readonly retentionDays = IDEMPOTENCY_RETENTION_DAYS,
  ) {}

  /** A unit of work for a write without a key (a scope that runs every write as one): nothing is stored with it. */
  openPlain(): UnitOfWork {
    const unit = this.createUnit();
    unit.beginLazily();
    return unit;
  }

  /**
   * The request's unit of work, lazy: nothing is sent yet. When the request first writes, the unit opens
   * its transaction and takes the key's lock with its row in one statement; a key held by a request
   * still running, or already used, stops the request there (KeyAlreadyUsed). A request that writes in
   * one statement never opens it: its write is sent with the key's row at `commit`, where the key's
   * primary key is the lock (a duplicate waits for the first to commit, then finds its row).
   */
  open(claim: IdempotencyClaim, options: { defersRefusable?: boolean } = {}): UnitOfWork {
    const unit = this.createUnit();
    unit.beginLazily(
      (begin, literal) =>
        inSpan('idempotency claim', { 'tessera.idempotency_scope': claim.scope }, () =>
          this.claim(claim, begin, literal),
        ),
      options,
    );
    return unit;
  }

  private async claim(claim: IdempotencyClaim, begin: Parameters<OnOpen>[0], literal: Parameters<OnOpen>[1]) {
    const rows = await begin(
      `SELECT pg_try_advisory_xact_lock(hashtextextended(${literal(lockKey(claim))}, 0)) AS locked, k.*
         FROM (SELECT 1) one LEFT JOIN (${KEY_ROW} WHERE key_digest = ${literal(claim.digest)}
           AND key_check = ${literal(`\\x${claim.check.toString('hex')}`)}) k ON true`,
    );
    const row = rows[0] as (KeyRow & { locked: boolean }) | undefined;
    if (!row?.locked) throw new KeyAlreadyUsed({ outcome: 'in_progress' });
    if (row.request_sha256 === null) return;
    const decision = this.decide(claim, row);
    if (decision) throw new KeyAlreadyUsed(decision);
    // Past its retention and not yet purged: forgotten, and this request runs.
    await this.forgetIfRetired(claim);
  }

  /**
   * Commits the unit with the key's row and answer. Undefined when stored; when the key turned out to be
   * used meanwhile (its row committed first), nothing of the unit is kept and the answer is what that
   * key decides (a replay, a mismatch).
   */
  async commit(
    unit: UnitOfWork,
    claim: IdempotencyClaim,
    answer: StoredAnswer,
  ): Promise<UsedKey | undefined> {
    try {
      await unit.commitWith(this.keyRow(claim, answer));
      return undefined;
    } catch (err) {
      if (!isKeyTaken(err)) throw err;
    }
    const row = await this.find(claim);
    const decision = row ? this.decide(claim, row) : undefined;
    if (decision) return decision;
    // Gone, or past retention and not yet purged: forgotten now, and the client's retry runs afresh.
    await this.forgetIfRetired(claim);
    return { outcome: 'in_progress' };
  }

  private async find(claim: IdempotencyClaim): Promise<KeyRow | undefined> {
    const { rows } = await this.db.executeQuery<KeyRow>(
      preparedStatement('idempotency_key_row', `${KEY_ROW} WHERE key_digest = $1 AND key_check = $2`, [
        claim.digest,
        claim.check,
      ]),
    );
    return rows[0];
  }

  /** The routes marked `answerInClear` (their test proves each answer holds nothing kept encrypted). */
  readonly answersInClear = new Set<string>();

  /** Deletes the key's row if it is past its retention (a row the purge sweep has not reached yet). */
  private async forgetIfRetired(claim: IdempotencyClaim): Promise<void> {
    await this.db
      .deleteFrom('idempotency_keys')
      .where('key_digest', '=', claim.digest)
      .where('key_check', '=', claim.check)
      .where(sql<boolean>`${this.retiredAt()} <= ${this.clock.now()}`)
      .execute();
  }

  /** The row's end of retention: its `due_at` once its answer is dropped, else counted from its use */
  private retiredAt() {
    return sql`(CASE WHEN response_body IS NULL AND response_body_enc IS NULL THEN due_at
      ELSE created_at + make_interval(days => ${this.retentionDays}) END)`;
  }

  /** What the key's row answers; undefined when it is past its retention (forgotten: the request runs). */
  private decide(claim: IdempotencyClaim, existing: KeyRow): UsedKey | undefined {
    const now = this.clock.now();
    const stored = existing.response_body ?? existing.response_body_enc;
    // While the row holds its answer, due_at is the replay window's end; once dropped, the retention's.
    const retiredAt =
      stored === null ? existing.due_at : addSeconds(existing.created_at, this.retentionDays * 86_400);
    if (retiredAt <= now) return undefined;
    if (!existing.request_sha256.equals(claim.requestHash)) return { outcome: 'mismatch' };
    if (stored === null || existing.due_at <= now) {
      return { outcome: 'expired', usedAt: existing.created_at, status: existing.response_status };
    }
    return {
      outcome: 'replay',
      status: existing.response_status,
      contentType: existing.response_content_type ?? JSON_UTF8,
      body: openAnswer(this.encryptor, stored, associatedData(claim)),
    };
  }

  /** The key's row with its answer: the last part of the request's statement, or its last statement. */
  private keyRow(claim: IdempotencyClaim, answer: StoredAnswer) {
    const now = this.clock.now();
    return {
      sql: INSERT_KEY,
      parameters: [
        claim.digest,
        claim.check,
        claim.requestHash,
        answer.status,
        answer.contentType === JSON_UTF8 ? null : answer.contentType,
        storeAnswer(this.encryptor, answer.body, associatedData(claim), claim.answerInClear),
        now,
        addSeconds(now, IDEMPOTENCY_TTL_SECONDS),
      ],
    };
  }

  /**
   * Drops answers past their replay window, and tombstones past their retention, up to PURGE_BATCH rows
   * of each per run. One index serves both (idempotency_keys_due, migration 0087): a row is due for one
   * sweep at a time, and dropping its answer moves its `due_at` to its retention's end, so each sweep reads
   * only the index's low end, up to now, and never walks the tombstones still kept.
   * The rows are named by their place (ctid), not their key: with 5,000 keys in an `IN`, Postgres chose to
   * hash them and scan the whole table for them (seen with EXPLAIN on a million keys); by place it visits
   * only those rows. A row another transaction changed or deleted meanwhile has moved from that place and
   * is left to the next run.
   */
  async purgeExpired(): Promise<number> {
    const now = this.clock.now();
    const purged = await sql`
      -- due_at read from the row as it was, its answer held: the retention's end
      UPDATE idempotency_keys SET response_body = NULL, response_body_enc = NULL, due_at = ${this.retiredAt()}
      WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM idempotency_keys
        WHERE due_at <= ${now} AND (response_body IS NOT NULL OR response_body_enc IS NOT NULL)
        LIMIT ${PURGE_BATCH}))`.execute(this.db);
    const deleted = await sql`
      DELETE FROM idempotency_keys WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM idempotency_keys
        WHERE due_at <= ${now} AND response_body IS NULL AND response_body_enc IS NULL
        LIMIT ${PURGE_BATCH}))`.execute(this.db);
    return Number(purged.numAffectedRows ?? 0) + Number(deleted.numAffectedRows ?? 0);
  }
}

interface KeyRow {
  request_sha256: Buffer;
  response_status: number;
  /** Null for the usual JSON (JSON_UTF8) */
  response_content_type: string | null;
  response_body: Buffer | null;
  /** An answer stored before migration 0078, as text */
  response_body_enc: string | null;
  created_at: Date;
  due_at: Date;
}

/**
 * The key's row, read with its lock in one statement. The row is read on the statement's snapshot, taken
 * just before the lock: a request with this key that committed in between is missed here, and then its
 * row stops this one at commit (the primary key), so the effect is never doubled.
 */
const KEY_ROW = `SELECT request_sha256, response_status, response_content_type, response_body, response_body_enc,
  created_at, due_at FROM idempotency_keys`;
const INSERT_KEY = `INSERT INTO idempotency_keys (key_digest, key_check, request_sha256, response_status,
  response_content_type, response_body, created_at, due_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`;

/** The content type most answers have, stored as null (migration 0084): 32 bytes of every key's row */
const JSON_UTF8 = 'application/json; charset=utf-8';

const lockKey = (claim: Pick<IdempotencyClaim, 'scope' | 'key'>) => `${claim.scope}\n${claim.key}`;

/**
 * The key's primary key (migration 0084): the first 16 bytes of the SHA-256 of its scope and key, as a
 * uuid; and its check (migration 0087), the other 16. Every lookup names both, so only a key with the same
 * SHA-256 would find another's row.
 */
export function keyDigest(claim: Pick<IdempotencyClaim, 'scope' | 'key'>): { digest: string; check: Buffer } {
  const sha = hash('sha256', lockKey(claim), 'buffer');
  const hex = sha.subarray(0, 16).toString('hex');
  return {
    digest: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`,
    check: sha.subarray(16),
  };
}

/** The key's row exists already: another request with it committed first. */
function isKeyTaken(err: unknown): boolean {
  return (
    pgErrorCode(err) === '23505' && (err as { constraint?: string }).constraint === 'idempotency_keys_pkey'
  );
}

/**
 * A stored answer is bytes (`response_body`, migration 0078): a first byte that says what follows, then
 * the answer in clear (UTF-8) or sealed (Encryptor.seal: nonce, ciphertext, tag), either of them first
 * deflated with the answers' dictionary (answer-dictionary.ts) where that makes it shorter. The row is
 * written with every keyed write: its bytes are WAL (docs/benchmarks.md, issue 54).
 */
const IN_CLEAR = 0;
const SEALED = 1;
/** Deflated without a dictionary past 1,024 characters, then sealed: written before issue 54, still read */
const DEFLATED_SEALED = 2;
const PACKED_IN_CLEAR = 3;
const PACKED_SEALED = 4;

/**
 * The answer as stored. Ciphertext does not compress, so an answer is deflated first: with the dictionary a
 * card transaction's 549 bytes become 118, an order's 184 bytes 23, for some 20 µs of CPU.
 */
export function storeAnswer(
  encryptor: Encryptor,
  body: string,
  associated: string,
  inClear: boolean | undefined,
): Buffer {
  const plain = Buffer.from(body, 'utf8');
  const deflated = deflateRawSync(plain, { dictionary: ANSWER_DICTIONARY_V1 });
  const packed = deflated.length < plain.length;
  const bytes = packed ? deflated : plain;
  if (inClear) return Buffer.concat([Buffer.of(packed ? PACKED_IN_CLEAR : IN_CLEAR), bytes]);
  return Buffer.concat([Buffer.of(packed ? PACKED_SEALED : SEALED), encryptor.seal(bytes, associated)]);
}

/** The answer a stored one holds, in any format written since the first */
export function openAnswer(encryptor: Encryptor, stored: Buffer | string, associated: string): string {
  if (typeof stored === 'string') return openTextAnswer(encryptor, stored, associated);
  const kind = stored[0];
  const rest = stored.subarray(1);
  if (kind === IN_CLEAR) return rest.toString('utf8');
  if (kind === SEALED) return encryptor.open(rest, associated).toString('utf8');
  if (kind === PACKED_IN_CLEAR) return unpack(rest);
  if (kind === PACKED_SEALED) return unpack(encryptor.open(rest, associated));
  if (kind === DEFLATED_SEALED) return inflateRawSync(encryptor.open(rest, associated)).toString('utf8');
  throw new Error('unknown stored answer format');
}

const unpack = (packed: Buffer) =>
  inflateRawSync(packed, { dictionary: ANSWER_DICTIONARY_V1 }).toString('utf8');

/** An answer stored as text before migration 0078: `clear:…`, `v1:…` (encrypted) or `z:v1:…` (deflated) */
function openTextAnswer(encryptor: Encryptor, stored: string, associated: string): string {
  if (stored.startsWith('clear:')) return stored.slice('clear:'.length);
  if (!stored.startsWith('z:')) return encryptor.decrypt(stored, associated);
  return inflateRawSync(Buffer.from(encryptor.decrypt(stored.slice(2), associated), 'base64')).toString(
    'utf8',
  );
}

const associatedData = (claim: IdempotencyClaim) => `idempotency:${claim.scope}\n${claim.key}`;

/** Method, path and the parsed body with keys sorted: form and JSON spellings of one request agree. */
export function hashRequest(method: string, url: string, body: unknown): Buffer {
  return hash('sha256', `${method} ${url}\n${stableStringify(body ?? null)}`, 'buffer');
}

/**
 * JSON with every object's keys in code-unit order and undefined members left out, so a request sent
 * again with its fields in another order is the same request. Built in one string, without the arrays
 * of entries a map-and-join makes (every keyed write runs this): its text, and so every stored hash,
 * is unchanged.
 */
export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) text += (i === 0 ? '' : ',') + stableStringify(value[i]);
    return `${text}]`;
  }
  const object = value as Record<string, unknown>;
  let text = '{';
  // The default sort orders strings by UTF-16 code units, as `<` does.
  for (const key of Object.keys(object).sort()) {
    const member = object[key];
    if (member === undefined) continue;
    text += `${text.length === 1 ? '' : ','}${JSON.stringify(key)}:${stableStringify(member)}`;
  }
  return `${text}}`;
}
