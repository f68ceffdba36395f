// The audit trail's records (migration 0041; docs/operations.md, Audit trail). A record is appended under
// a transaction-scoped advisory lock, numbered one past the last and chained to it: its hash covers the
// previous record's hash and its own fields in a canonical form, so verifying the chain from the first
// record finds any record edited, removed or inserted out of place. Human actions are few; the lock is
// held only to the end of the action's transaction.
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Db, Executor } from '../db/database.ts';
import { toCsv } from '../payouts/reports.ts';

const AUDIT_CHAIN_LOCK = 727_041;
export const GENESIS = '0'.repeat(64);

export interface AuditEntry {
  at: Date;
  /** 'admin_token', 'console_user', 'console_stranger' (a failed sign-in) */
  actorKind: string;
  /** Who: a console user's email, or 'admin token' */
  actor: string;
  /** Where from: the client's address */
  source: string | null;
  /** What: 'POST /admin/partners', 'console sign-in', 'POST /console/payments/transactions/:id/refund' */
  action: string;
  objectId: string | null;
  tenant: { kind: string; id: string } | null;
  /** What was asked or changed, secrets removed */
  detail: Record<string, unknown>;
  outcome: 'succeeded' | 'refused' | 'failed';
  status: number | null;
  requestId: string | null;
}

export interface AuditRecord extends AuditEntry {
  seq: number;
  prevHash: string;
  hash: string;
}

/** Appends the record in the caller's transaction (or unit of work): it commits with the action. */
export async function appendAudit(tx: Executor, asked: AuditEntry): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${AUDIT_CHAIN_LOCK})`.execute(tx);
  const last = await tx
    .selectFrom('audit_events')
    .select(['seq', 'hash', 'at'])
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  const seq = last ? Number(last.seq) + 1 : 1;
  const prevHash = last?.hash ?? GENESIS;
  // Times never go back along the chain (two actions may take the lock in another order than their clocks
  // read): a time window then is a run of records, read newest first by the time index (listAudit).
  const entry = last && last.at > asked.at ? { ...asked, at: last.at } : asked;
  await tx
    .insertInto('audit_events')
    .values({
      seq: BigInt(seq),
      at: entry.at,
      actor_kind: entry.actorKind,
      actor: entry.actor,
      source: entry.source,
      action: entry.action,
      object_id: entry.objectId,
      tenant_kind: entry.tenant?.kind ?? null,
      tenant_id: entry.tenant?.id ?? null,
      detail: JSON.stringify(entry.detail),
      outcome: entry.outcome,
      status: entry.status,
      request_id: entry.requestId,
      prev_hash: prevHash,
      hash: hashOf(seq, prevHash, entry),
    })
    .execute();
}

/** The record's hash: the previous hash and every field, in one canonical form. */
export function hashOf(seq: number, prevHash: string, entry: AuditEntry): string {
  const fields = canonical({ ...entry, at: entry.at.toISOString(), seq });
  return createHash('sha256').update(`${prevHash}\n${fields}`).digest('hex');
}

/** JSON with object keys sorted at every depth (jsonb keeps its own order). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

function toRecord(row: {
  seq: string;
  at: Date;
  actor_kind: string;
  actor: string;
  source: string | null;
  action: string;
  object_id: string | null;
  tenant_kind: string | null;
  tenant_id: string | null;
  detail: Record<string, unknown>;
  outcome: 'succeeded' | 'refused' | 'failed';
  status: number | null;
  request_id: string | null;
  prev_hash: string;
  hash: string;
}): AuditRecord {
  return {
    seq: Number(row.seq),
    at: row.at,
    actorKind: row.actor_kind,
    actor: row.actor,
    source: row.source,
    action: row.action,
    objectId: row.object_id,
    tenant: row.tenant_kind && row.tenant_id ? { kind: row.tenant_kind, id: row.tenant_id } : null,
    detail: row.detail,
    outcome: row.outcome,
    status: row.status,
    requestId: row.request_id,
    prevHash: row.prev_hash,
    hash: row.hash,
  };
}

export type Verdict =
  | { ok: true; records: number; head: { seq: number; hash: string } | null }
  | { ok: false; records: number; brokenAt: number; reason: string };

/**
 * Walks the chain a page at a time: from the first record, or from a checkpoint — a record an earlier run
 * printed as its head. From a checkpoint the record's own hash is checked (against the one printed, when
 * given) and the walk goes on from the record after it, so a daily check reads the day's records only.
 */
export async function verifyAudit(
  db: Db,
  from?: { seq: number; hash?: string | undefined },
): Promise<Verdict> {
  let prevHash = GENESIS;
  let expected = 1;
  let head: { seq: number; hash: string } | null = null;
  if (from) {
    const row = await db
      .selectFrom('audit_events')
      .selectAll()
      .where('seq', '=', String(from.seq))
      .executeTakeFirst();
    if (!row)
      return { ok: false, records: 0, brokenAt: from.seq, reason: 'the checkpoint record is missing' };
    const record = toRecord(row as Parameters<typeof toRecord>[0]);
    const { seq: _seq, prevHash: _prev, hash, ...entry } = record;
    if (hashOf(record.seq, record.prevHash, entry) !== hash)
      return { ok: false, records: 0, brokenAt: record.seq, reason: 'its content does not match its hash' };
    if (from.hash !== undefined && from.hash !== hash)
      return { ok: false, records: 0, brokenAt: record.seq, reason: 'its hash is not the checkpoint’s' };
    prevHash = hash;
    expected = record.seq + 1;
    head = { seq: record.seq, hash };
  }
  const first = expected;
  for (;;) {
    const rows = await db
      .selectFrom('audit_events')
      .selectAll()
      .where('seq', '>=', String(expected))
      .orderBy('seq')
      .limit(1000)
      .execute();
    if (rows.length === 0) return { ok: true, records: expected - first, head };
    for (const row of rows) {
      const record = toRecord(row as Parameters<typeof toRecord>[0]);
      const broken = (reason: string): Verdict => ({
        ok: false,
        records: expected - first,
        brokenAt: record.seq,
        reason,
      });
      if (record.seq !== expected) return broken(`record ${expected} is missing`);
      if (record.prevHash !== prevHash) return broken('it does not follow the record before it');
      const { seq: _seq, prevHash: _prev, hash, ...entry } = record;
      if (hashOf(record.seq, prevHash, entry) !== hash) return broken('its content does not match its hash');
      prevHash = hash;
      head = { seq: record.seq, hash };
      expected++;
    }
  }
}

export interface AuditFilters {
  actor?: string | undefined;
  tenant?: { kind: string; id: string } | undefined;
  objectId?: string | undefined;
  action?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
  /** Records before this one (newest first) */
  before?: number | undefined;
  limit: number;
}

/** Newest first, by the indexes of its filters; `before` pages back. */
export async function listAudit(db: Db, filters: AuditFilters): Promise<AuditRecord[]> {
  let query = db.selectFrom('audit_events').selectAll();
  if (filters.actor) query = query.where('actor', '=', filters.actor);
  if (filters.tenant)
    query = query.where('tenant_kind', '=', filters.tenant.kind).where('tenant_id', '=', filters.tenant.id);
  if (filters.objectId) query = query.where('object_id', '=', filters.objectId);
  if (filters.action) query = query.where('action', '=', filters.action);
  if (filters.from) query = query.where('at', '>=', filters.from);
  if (filters.to) query = query.where('at', '<', filters.to);
  if (filters.before) query = query.where('seq', '<', String(filters.before));
  // Within a time window, newest first by time then number (the same order: times never go back along
  // the chain), so the time index serves the page without reading the whole window.
  if (filters.from || filters.to) query = query.orderBy('at', 'desc');
  const rows = await query.orderBy('seq', 'desc').limit(filters.limit).execute();
  return rows.map((row) => toRecord(row as Parameters<typeof toRecord>[0]));
}

/** Records as CSV, one line each, its detail as JSON (the admin API's and the console's export). */
export function auditCsv(records: AuditRecord[]): string {
  const header = [
    'seq',
    'at',
    'actor_kind',
    'actor',
    'source',
    'action',
    'object_id',
    'tenant',
    'outcome',
    'status',
    'request_id',
    'detail',
    'hash',
  ];
  const rows = records.map((r) => [
    String(r.seq),
    r.at.toISOString(),
    r.actorKind,
    inert(r.actor),
    inert(r.source ?? ''),
    inert(r.action),
    inert(r.objectId ?? ''),
    r.tenant ? inert(`${r.tenant.kind}:${r.tenant.id}`) : '',
    r.outcome,
    r.status === null ? '' : String(r.status),
    inert(r.requestId ?? ''),
    JSON.stringify(r.detail),
    r.hash,
  ]);
  return toCsv(header, rows);
}

/**
 * A recorded string a spreadsheet must not run: what a stranger typed (a sign-in's email) may start with
 * `=`, `+`, `-` or `@`, which a spreadsheet reads as a formula; a leading apostrophe keeps it text.
 */
const inert = (text: string): string => (/^[=+\-@\t\r]/.test(text) ? `'${text}` : text);
