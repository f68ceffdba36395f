// Block and allow lists (docs/risk.md, Lists): per scope, of one kind of value, read by rules as
// `list('name')`. A tenant's rules see its own lists and the platform's (its own first, by name). Items are
// normalised by kind when added (an email lower case, a CIDR range checked), so a rule compares like with
// like. Cached per tenant like the rules; a trigger announces every change (migration 0053).
import { isIP } from 'node:net';
import { noteChange } from '../audit/audit-changes.ts';
import type { Clock } from '../clock/clock.ts';
import type { Executor } from '../db/database.ts';
import { DomainError, notFound } from '../errors/domain-error.ts';
import { newId } from '../ids.ts';
import type { TenantCache } from '../tenants/tenant-cache.ts';
import type { RiskScope } from './decision-points.ts';
import { RiskList } from './rule-expression.ts';

export const LIST_KINDS = [
  'card_fingerprint',
  'bin',
  'email',
  'email_domain',
  'ip',
  'country',
  'crypto_address',
  'iban',
] as const;
export type ListKind = (typeof LIST_KINDS)[number];

export interface ListInfo {
  id: string;
  scope: RiskScope;
  name: string;
  kind: ListKind;
  createdAt: Date;
}

/** The most items one request adds (a CSV import is sent in parts of this size) */
/** A list's name as a rule writes it: list('blocked_ips') */
export const LIST_NAME = /^[a-z0-9_]{1,64}$/;

export const MAX_ITEMS_PER_REQUEST = 10_000;

/** An item as the list keeps it, or why it is not one of the list's kind. */
export function normaliseItem(kind: ListKind, raw: string): string | { error: string } {
  const value = raw.trim();
  if (value === '') return { error: 'is empty' };
  switch (kind) {
    case 'email':
      return /^[^@\s]+@[^@\s]+$/.test(value) ? value.toLowerCase() : { error: 'is not an email address' };
    case 'email_domain':
      return /^[a-z0-9.-]+\.[a-z]{2,}$/i.test(value) ? value.toLowerCase() : { error: 'is not a domain' };
    case 'ip': {
      const [address = '', prefix, extra] = value.split('/');
      const family = isIP(address);
      if (family === 0 || extra !== undefined) return { error: 'is not an IP address or CIDR range' };
      if (prefix === undefined) return address.toLowerCase();
      const bits = Number(prefix);
      const max = family === 4 ? 32 : 128;
      if (!/^\d{1,3}$/.test(prefix) || bits > max) return { error: `has a prefix length over ${max}` };
      return `${address.toLowerCase()}/${bits}`;
    }
    case 'country':
      return /^[A-Za-z]{2}$/.test(value) ? value.toUpperCase() : { error: 'is not an ISO 3166 alpha-2 code' };
    case 'bin':
      return /^\d{6,8}$/.test(value) ? value : { error: 'is not 6 to 8 digits' };
    case 'iban':
      return /^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$/i.test(value.replace(/\s/g, ''))
        ? value.replace(/\s/g, '').toUpperCase()
        : { error: 'is not an IBAN' };
    case 'card_fingerprint':
    case 'crypto_address':
      return value.length <= 200 ? value : { error: 'is longer than 200 characters' };
  }
}

const toInfo = (row: {
  id: string;
  scope: string;
  name: string;
  kind: string;
  created_at: Date;
}): ListInfo => ({
  id: row.id,
  scope: row.scope,
  name: row.name,
  kind: row.kind as ListKind,
  createdAt: row.created_at,
});

export class RiskLists {
  constructor(private readonly deps: { clock: Clock; cache: TenantCache }) {}

  async create(db: Executor, input: { scope: RiskScope; name: string; kind: ListKind }): Promise<ListInfo> {
    const now = this.deps.clock.now();
    const row = await db
      .insertInto('risk_lists')
      .values({ id: newId('riskList', now.getTime()), ...input, created_at: now })
      .onConflict((oc) => oc.columns(['scope', 'name']).doNothing())
      .returningAll()
      .executeTakeFirst();
    if (!row)
      throw new DomainError('conflict', `a list named ${input.name} exists in this scope`, { field: 'name' });
    return toInfo(row);
  }

  async get(db: Executor, id: string, scopes?: readonly RiskScope[]): Promise<ListInfo> {
    let query = db.selectFrom('risk_lists').selectAll().where('id', '=', id);
    if (scopes) query = query.where('scope', 'in', scopes);
    const row = await query.executeTakeFirst();
    if (!row) throw notFound('list');
    return toInfo(row);
  }

  async list(
    db: Executor,
    scopes: readonly RiskScope[] | undefined,
    page: { after?: string; limit: number },
  ) {
    let query = db.selectFrom('risk_lists').selectAll().orderBy('id').limit(page.limit);
    if (scopes) query = query.where('scope', 'in', scopes);
    if (page.after) query = query.where('id', '>', page.after);
    return (await query.execute()).map(toInfo);
  }

  /** Deletes a list and its items; a rule that names it then reads it as empty. */
  async remove(db: Executor, id: string, scopes?: readonly RiskScope[]): Promise<void> {
    const list = await this.get(db, id, scopes);
    await db.deleteFrom('risk_lists').where('id', '=', id).execute();
    noteChange('risk list', { name: list.name, kind: list.kind }, null);
  }

  /**
   * Adds items (normalised by the list's kind; one not of its kind refuses the whole request, naming its
   * index). Answers how many were new.
   */
  async addItems(db: Executor, list: ListInfo, raw: readonly string[]): Promise<number> {
    const values: string[] = [];
    for (const [index, item] of raw.entries()) {
      const value = normaliseItem(list.kind, item);
      if (typeof value !== 'string') {
        throw new DomainError('validation_failed', `items[${index}] ${value.error}`, {
          field: `items[${index}]`,
        });
      }
      values.push(value);
    }
    const unique = [...new Set(values)];
    if (unique.length === 0) return 0;
    const now = this.deps.clock.now();
    const added = await db
      .insertInto('risk_list_items')
      .values(unique.map((value) => ({ list_id: list.id, value, created_at: now })))
      .onConflict((oc) => oc.columns(['list_id', 'value']).doNothing())
      .returning('value')
      .execute();
    noteChange('risk list items', null, { list: list.name, added: added.length });
    return added.length;
  }

  async removeItem(db: Executor, list: ListInfo, raw: string): Promise<void> {
    const value = normaliseItem(list.kind, raw);
    const removed =
      typeof value === 'string'
        ? await db
            .deleteFrom('risk_list_items')
            .where('list_id', '=', list.id)
            .where('value', '=', value)
            .executeTakeFirst()
        : undefined;
    if (!removed || removed.numDeletedRows === 0n) throw notFound('item');
    noteChange('risk list items', { list: list.name, removed: value }, null);
  }

  async items(db: Executor, list: ListInfo, page: { after?: string; limit: number }) {
    let query = db
      .selectFrom('risk_list_items')
      .select(['value', 'created_at'])
      .where('list_id', '=', list.id)
      .orderBy('value')
      .limit(page.limit);
    if (page.after !== undefined) query = query.where('value', '>', page.after);
    return query.execute();
  }

  /** The names a rule of this scope may read: its own lists and the platform's. */
  async namesIn(db: Executor, scope: RiskScope): Promise<Set<string>> {
    const rows = await db
      .selectFrom('risk_lists')
      .select('name')
      .where('scope', 'in', [...new Set(['platform', scope])])
      .execute();
    return new Set(rows.map((r) => r.name));
  }

  /** The lists a tenant's rules read, by name (the tenant's own over the platform's of the same name). */
  async listsFor(db: Executor, tenant: RiskScope): Promise<ReadonlyMap<string, RiskList>> {
    const found = await this.deps.cache.get<ReadonlyMap<string, RiskList>>(
      `risk-lists:${tenant}`,
      async () => {
        const rows = await db
          .selectFrom('risk_lists as l')
          .innerJoin('risk_list_items as i', 'i.list_id', 'l.id')
          .select(['l.name', 'l.scope', 'l.kind', 'i.value'])
          .where('l.scope', 'in', ['platform', tenant])
          .execute();
        const grouped = new Map<string, { scope: string; kind: string; values: string[] }>();
        for (const row of rows) {
          const key = `${row.scope}\u0000${row.name}`;
          const group = grouped.get(key) ?? { scope: row.scope, kind: row.kind, values: [] };
          group.values.push(row.value);
          grouped.set(key, group);
        }
        const lists = new Map<string, RiskList>();
        // The platform's first, so a tenant's list of the same name replaces it.
        const ordered = [...grouped.entries()].sort(
          ([, a], [, b]) => Number(b.scope === 'platform') - Number(a.scope === 'platform'),
        );
        for (const [key, group] of ordered) {
          const name = key.split('\u0000')[1] ?? '';
          const exact = group.values.filter((v) => !v.includes('/'));
          const ranges = group.kind === 'ip' ? group.values.filter((v) => v.includes('/')) : [];
          lists.set(name, new RiskList(name, new Set(exact), ranges));
        }
        return { value: lists };
      },
    );
    return found ?? new Map();
  }
}
