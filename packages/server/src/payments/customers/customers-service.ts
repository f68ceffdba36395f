// Customers of a merchant's sites (spec, Customer). The identifier is unique per site among live
// customers (a second one is 409, system code 1627). Deleting a customer cancels its recurring and managed
// orders and deletes its stored cards (mandates) in the same transaction; its payment history stays.
import type { Selectable } from 'kysely';
import type { Clock } from '../../platform/clock/clock.ts';
import type { Db, Executor, Tx } from '../../platform/db/database.ts';
import type { PaymentsCustomersTable } from '../../platform/db/schema.ts';
import type { Transact } from '../../platform/db/transact.ts';
import { DomainError, notFound } from '../../platform/errors/domain-error.ts';
import type { Page } from '../http/envelope.ts';
import type { MerchantScope } from '../sites.ts';
import { siteOf } from '../sites.ts';
import { checkIdentifier } from './customer-identifier.ts';

export const CUSTOMER_EXISTS = 1627;

export interface CustomerFields {
  identifier?: string;
  email?: string;
  firstName?: string;
  lastName?: string;
  country?: string;
  state?: string;
  city?: string;
  zipCode?: string;
  address?: string;
  phone?: string;
}

export interface Customer extends Required<{ [K in keyof CustomerFields]: string | null }> {
  id: number;
  siteId: number;
  identifier: string;
  createdAt: Date;
}

export interface CustomerFilter {
  country?: string;
  email?: string;
  identifier?: string;
  createdAtFrom?: Date;
  createdAtTo?: Date;
}

type Row = Selectable<PaymentsCustomersTable>;

const COLUMNS = {
  identifier: 'identifier',
  email: 'email',
  firstName: 'first_name',
  lastName: 'last_name',
  country: 'country',
  state: 'state',
  city: 'city',
  zipCode: 'zip_code',
  address: 'address',
  phone: 'phone',
} as const;

export class CustomersService {
  /** Set by the orders module: what else a customer's deletion ends (orders, mandates). */
  onDelete: (tx: Tx, merchantId: number, customerId: number) => Promise<void> = async () => {};

  constructor(private readonly deps: { db: Db; transact: Transact; clock: Clock }) {}

  async create(merchant: MerchantScope, input: CustomerFields & { siteId?: number }): Promise<Customer> {
    const siteId = siteOf(merchant, input.siteId);
    if (!input.identifier)
      throw new DomainError('validation_failed', 'identifier is required', { field: 'identifier' });
    checkIdentifier(input.identifier);
    return this.deps.transact(async (tx) => {
      await this.refuseDuplicate(tx, siteId, input.identifier as string);
      const row = await tx
        .insertInto('payments_customers')
        .values({
          merchant_id: merchant.merchantId,
          site_id: siteId,
          identifier: input.identifier as string,
          ...columns(input),
          created_at: this.deps.clock.now(),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return present(row);
    });
  }

  /**
   * The site's customer with this identifier, made with these details when there is none (the hosted
   * pages, where a buyer arrives known by an identifier or an email). Two at once make one customer.
   */
  async findOrCreate(merchant: MerchantScope, input: CustomerFields & { siteId: number }): Promise<number> {
    try {
      return (await this.create(merchant, input)).id;
    } catch (err) {
      const existing =
        err instanceof DomainError ? (err.details?.data as { id?: number } | undefined)?.id : undefined;
      if (existing === undefined) throw err;
      return existing;
    }
  }

  async get(merchant: MerchantScope, id: number, db: Executor = this.deps.db): Promise<Customer> {
    const row = await db
      .selectFrom('payments_customers')
      .selectAll()
      .where('id', '=', id)
      .where('merchant_id', '=', merchant.merchantId)
      .where('site_id', 'in', merchant.siteIds)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (!row) throw notFound('customer');
    return present(row);
  }

  async update(merchant: MerchantScope, id: number, input: CustomerFields): Promise<Customer> {
    return this.deps.transact(async (tx) => {
      const current = await this.get(merchant, id, tx);
      if (input.identifier !== undefined && input.identifier !== current.identifier) {
        checkIdentifier(input.identifier);
        await this.refuseDuplicate(tx, current.siteId, input.identifier);
      }
      const changes = columns(input);
      // Nothing to change answers the customer as it is (docs/payments.md), as an empty SET cannot.
      if (Object.keys(changes).length === 0) return current;
      const row = await tx
        .updateTable('payments_customers')
        .set(changes)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return present(row);
    });
  }

  async delete(merchant: MerchantScope, id: number): Promise<void> {
    await this.deps.transact(async (tx) => {
      const locked = await tx
        .selectFrom('payments_customers')
        .select('id')
        .where('id', '=', id)
        .where('merchant_id', '=', merchant.merchantId)
        .where('site_id', 'in', merchant.siteIds)
        .where('deleted_at', 'is', null)
        .forUpdate()
        .executeTakeFirst();
      if (!locked) throw notFound('customer');
      await tx
        .updateTable('payments_customers')
        .set({ deleted_at: this.deps.clock.now() })
        .where('id', '=', id)
        .execute();
      await this.onDelete(tx, merchant.merchantId, id);
    });
  }

  async list(merchant: MerchantScope, filter: CustomerFilter, page: Page) {
    let query = this.deps.db
      .selectFrom('payments_customers')
      .where('merchant_id', '=', merchant.merchantId)
      .where('site_id', 'in', merchant.siteIds)
      .where('deleted_at', 'is', null);
    if (filter.country) query = query.where('country', '=', filter.country);
    if (filter.email) query = query.where('email', '=', filter.email);
    if (filter.identifier) query = query.where('identifier', '=', filter.identifier);
    if (filter.createdAtFrom) query = query.where('created_at', '>=', filter.createdAtFrom);
    if (filter.createdAtTo) query = query.where('created_at', '<=', filter.createdAtTo);
    const total = await query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    const rows = await query
      .selectAll()
      .orderBy('id', page.newestFirst ? 'desc' : 'asc')
      .limit(page.perPage)
      .offset((page.page - 1) * page.perPage)
      .execute();
    return { items: rows.map(present), total: Number(total.n) };
  }

  private async refuseDuplicate(tx: Tx, siteId: number, identifier: string): Promise<void> {
    const existing = await tx
      .selectFrom('payments_customers')
      .select('id')
      .where('site_id', '=', siteId)
      .where('identifier', '=', identifier)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (existing) {
      throw new DomainError('conflict', 'a customer with this identifier already exists on the site', {
        field: 'identifier',
        details: { systemCode: CUSTOMER_EXISTS, data: { id: existing.id } },
      });
    }
  }
}

function columns(input: CustomerFields) {
  const set: Record<string, string | null> = {};
  for (const [key, column] of Object.entries(COLUMNS)) {
    const value = input[key as keyof CustomerFields];
    if (value !== undefined) set[column] = value === '' && key !== 'identifier' ? null : value;
  }
  return set;
}

function present(row: Row): Customer {
  return {
    id: row.id,
    siteId: row.site_id,
    identifier: row.identifier,
    firstName: row.first_name,
    lastName: row.last_name,
    country: row.country,
    state: row.state,
    city: row.city,
    zipCode: row.zip_code,
    address: row.address,
    phone: row.phone,
    email: row.email,
    createdAt: row.created_at,
  };
}
