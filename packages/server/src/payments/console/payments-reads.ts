// What the console shows of the payments API: orders, transactions, customers, stored cards (masked),
// payment links and sites, each list scoped to the viewer's merchant and paged by cursor.

import { sql } from 'kysely';
import { tenantCondition } from '../../platform/console/console-scope.ts';
import type { Viewer } from '../../platform/console/console-users.ts';
import { DIGITS, pageOf, whenGiven } from '../../platform/console/paging.ts';
import type { Executor } from '../../platform/db/database.ts';
import { notFound } from '../../platform/errors/domain-error.ts';

type Filters = Record<string, string | undefined>;
interface Cursor {
  cursor_at: Date;
  cursor_id: string;
}

export const DISPUTE_STATUSES = ['needs_response', 'under_review', 'won', 'lost', 'accepted'] as const;

export interface OrderRow extends Cursor {
  id: number;
  merchant_id: number;
  site_id: number;
  site_name: string;
  customer_id: number;
  /** The customer's name and email, shown beside the id to a role that may read personal data */
  customer_name: string | null;
  customer_email: string | null;
  order_type: string;
  status: string;
  amount: string;
  currency: string;
  description: string | null;
  external_order_id: string | null;
  created_at: Date;
}

/** A customer's name and email beside its id: one primary-key probe per row of a page */
const CUSTOMER_NAME = sql`nullif(concat_ws(' ', cu.first_name, cu.last_name), '') AS customer_name,
  cu.email AS customer_email`;

const ORDER_COLUMNS = sql`o.id, o.merchant_id, o.site_id, s.name AS site_name, o.customer_id, o.order_type, o.status,
  o.amount, o.currency, o.description, o.external_order_id, o.created_at, ${CUSTOMER_NAME}
  FROM payments_orders o JOIN sites s ON s.id = o.site_id
  LEFT JOIN payments_customers cu ON cu.id = o.customer_id`;

export function listOrders(db: Executor, viewer: Viewer, f: Filters) {
  return pageOf<OrderRow>(
    db,
    {
      selectFrom: ORDER_COLUMNS,
      where: [
        tenantCondition(viewer, 'merchant', 'o.merchant_id'),
        ...whenGiven(f, 'status', (v) => sql`o.status = ${v}`),
        ...whenGiven(f, 'siteId', (v) => sql`o.site_id = ${Number(v)}`, DIGITS),
        ...whenGiven(f, 'customerId', (v) => sql`o.customer_id = ${Number(v)}`, DIGITS),
        ...whenGiven(f, 'currency', (v) => sql`o.currency = ${v.toUpperCase()}`, /^[A-Za-z]{3}$/),
      ],
      createdAt: 'o.created_at',
      id: 'o.id',
      sequence: 'o.id',
      table: 'payments_orders',
      amount: { column: 'o.amount', currency: 'o.currency' },
    },
    f,
  );
}

export interface OrderDetail extends OrderRow {
  card_transaction_mode: string;
  back_url: string | null;
  invoice_email: string | null;
  interval_type: string | null;
  interval_value: number | null;
  next_bill_at: Date | null;
  payment_link_hash: string | null;
  cancel_reason: string | null;
}

export async function getOrder(db: Executor, viewer: Viewer, id: string): Promise<OrderDetail> {
  if (!DIGITS.test(id)) throw notFound('order');
  const { rows } = await sql<OrderDetail>`
    SELECT o.created_at AS cursor_at, o.id::text AS cursor_id, o.card_transaction_mode, o.back_url, o.invoice_email,
      o.interval_type, o.interval_value, o.next_bill_at, o.payment_link_hash, o.cancel_reason, ${ORDER_COLUMNS}
    WHERE o.id = ${Number(id)} AND ${tenantCondition(viewer, 'merchant', 'o.merchant_id')}`.execute(db);
  const row = rows[0];
  if (!row) throw notFound('order');
  return row;
}

export interface TransactionRow extends Cursor {
  id: number;
  merchant_id: number;
  site_id: number;
  order_id: number;
  customer_id: number;
  customer_name: string | null;
  customer_email: string | null;
  parent_id: number | null;
  type: string;
  status: string;
  mode: string;
  amount: string;
  captured_amount: string;
  refunded_amount: string;
  currency: string;
  card_brand: string | null;
  card_bin: string | null;
  card_last4: string | null;
  card_expiry: string | null;
  card_holder_name: string | null;
  is_3d: boolean;
  method: 'card' | 'wallet';
  decline_reason: string | null;
  error_message: string | null;
  reason: string | null;
  auth_expires_at: Date | null;
  created_at: Date;
}

const TRANSACTION_COLUMNS = sql`t.id, t.merchant_id, t.site_id, t.order_id, t.customer_id, t.parent_id, t.type, t.status,
  t.mode, t.amount, t.captured_amount, t.refunded_amount, t.currency, t.card_brand, t.card_bin, t.card_last4,
  t.card_expiry, t.card_holder_name, t.is_3d, t.method,
  t.decline_reason, t.error_message, t.reason, t.auth_expires_at, t.created_at, ${CUSTOMER_NAME}
  FROM payments_transactions t LEFT JOIN payments_customers cu ON cu.id = t.customer_id`;

export function listTransactions(db: Executor, viewer: Viewer, f: Filters) {
  return pageOf<TransactionRow>(
    db,
    {
      selectFrom: TRANSACTION_COLUMNS,
      where: [
        tenantCondition(viewer, 'merchant', 't.merchant_id'),
        ...whenGiven(f, 'status', (v) => sql`t.status = ${v}`),
        ...whenGiven(f, 'type', (v) => sql`t.type = ${v}`),
        ...whenGiven(f, 'orderId', (v) => sql`t.order_id = ${Number(v)}`, DIGITS),
        ...whenGiven(f, 'parentId', (v) => sql`t.parent_id = ${Number(v)}`, DIGITS),
      ],
      createdAt: 't.created_at',
      id: 't.id',
      sequence: 't.id',
      table: 'payments_transactions',
      amount: { column: 't.amount', currency: 't.currency' },
    },
    f,
  );
}

export async function getTransaction(db: Executor, viewer: Viewer, id: string): Promise<TransactionRow> {
  if (!DIGITS.test(id)) throw notFound('transaction');
  const { rows } = await sql<TransactionRow>`
    SELECT t.created_at AS cursor_at, t.id::text AS cursor_id, ${TRANSACTION_COLUMNS}
    WHERE t.id = ${Number(id)} AND ${tenantCondition(viewer, 'merchant', 't.merchant_id')}`.execute(db);
  const row = rows[0];
  if (!row) throw notFound('transaction');
  return row;
}

export interface CustomerRow extends Cursor {
  id: number;
  site_id: number;
  identifier: string;
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  country: string | null;
  city: string | null;
  created_at: Date;
  deleted_at: Date | null;
}

const CUSTOMER_COLUMNS = sql`c.id, c.site_id, c.identifier, c.email, c.first_name, c.last_name, c.country, c.city,
  c.created_at, c.deleted_at FROM payments_customers c`;

export function listCustomers(db: Executor, viewer: Viewer, f: Filters) {
  return pageOf<CustomerRow>(
    db,
    {
      selectFrom: CUSTOMER_COLUMNS,
      where: [
        tenantCondition(viewer, 'merchant', 'c.merchant_id'),
        ...whenGiven(f, 'email', (v) => sql`c.email ILIKE ${`%${v.replace(/[%_\\]/g, '\\$&')}%`}`),
        ...whenGiven(f, 'siteId', (v) => sql`c.site_id = ${Number(v)}`, DIGITS),
      ],
      createdAt: 'c.created_at',
      id: 'c.id',
    },
    f,
  );
}

export async function getCustomer(db: Executor, viewer: Viewer, id: string): Promise<CustomerRow> {
  if (!DIGITS.test(id)) throw notFound('customer');
  const { rows } = await sql<CustomerRow>`
    SELECT c.created_at AS cursor_at, c.id::text AS cursor_id, ${CUSTOMER_COLUMNS}
    WHERE c.id = ${Number(id)} AND ${tenantCondition(viewer, 'merchant', 'c.merchant_id')}`.execute(db);
  const row = rows[0];
  if (!row) throw notFound('customer');
  return row;
}

export interface StoredCardRow extends Cursor {
  id: number;
  customer_id: number;
  brand: string;
  bin: string;
  last4: string;
  expiry_month: number;
  expiry_year: number;
  status: string;
  created_at: Date;
}

export function listStoredCards(db: Executor, viewer: Viewer, f: Filters) {
  return pageOf<StoredCardRow>(
    db,
    {
      selectFrom: sql`k.id, k.customer_id, k.brand, k.bin, k.last4, k.expiry_month, k.expiry_year, k.status, k.created_at
        FROM payments_cards k`,
      where: [
        tenantCondition(viewer, 'merchant', 'k.merchant_id'),
        ...whenGiven(f, 'customerId', (v) => sql`k.customer_id = ${Number(v)}`, DIGITS),
      ],
      createdAt: 'k.created_at',
      id: 'k.id',
    },
    f,
  );
}

export interface LinkRow extends Cursor {
  hash: string;
  site_id: number;
  order_type: string;
  amount: string;
  currency: string;
  description: string | null;
  active: boolean;
  usage_limit: number | null;
  expires_at: Date | null;
  created_at: Date;
}

export function listLinks(db: Executor, viewer: Viewer, f: Filters) {
  return pageOf<LinkRow>(
    db,
    {
      selectFrom: sql`l.hash, l.site_id, l.order_type, l.amount, l.currency, l.description, l.active, l.usage_limit,
        l.expires_at, l.created_at FROM payments_links l`,
      where: [tenantCondition(viewer, 'merchant', 'l.merchant_id'), sql`l.deleted_at IS NULL`],
      createdAt: 'l.created_at',
      id: 'l.hash',
    },
    f,
  );
}

export interface SiteRow extends Cursor {
  id: number;
  merchant_id: number;
  merchant_name: string;
  name: string;
  ipn_url: string | null;
  previous_secret_key_until: Date | null;
  mcc: string | null;
  country: string | null;
  created_at: Date;
}

const SITE_COLUMNS = sql`s.id, s.merchant_id, m.name AS merchant_name, s.name, s.ipn_url, s.previous_secret_key_until,
  s.mcc, s.country, s.created_at FROM sites s JOIN merchants m ON m.id = s.merchant_id`;

export function listSites(db: Executor, viewer: Viewer, f: Filters) {
  return pageOf<SiteRow>(
    db,
    {
      selectFrom: SITE_COLUMNS,
      where: [
        tenantCondition(viewer, 'merchant', 's.merchant_id'),
        ...whenGiven(f, 'merchantId', (v) => sql`s.merchant_id = ${Number(v)}`, DIGITS),
      ],
      createdAt: 's.created_at',
      id: 's.id',
    },
    f,
  );
}

export async function getSite(db: Executor, viewer: Viewer, id: string): Promise<SiteRow> {
  if (!DIGITS.test(id)) throw notFound('site');
  const { rows } = await sql<SiteRow>`
    SELECT s.created_at AS cursor_at, s.id::text AS cursor_id, ${SITE_COLUMNS}
    WHERE s.id = ${Number(id)} AND ${tenantCondition(viewer, 'merchant', 's.merchant_id')}`.execute(db);
  const row = rows[0];
  if (!row) throw notFound('site');
  return row;
}

export interface MerchantKeyRow extends Cursor {
  id: string;
  merchant_id: number;
  merchant_name: string;
  created_at: Date;
  revoked_at: Date | null;
}

export function listMerchantKeys(db: Executor, viewer: Viewer, f: Filters) {
  return pageOf<MerchantKeyRow>(
    db,
    {
      selectFrom: sql`k.id, k.merchant_id, m.name AS merchant_name, k.created_at, k.revoked_at
        FROM merchant_api_keys k JOIN merchants m ON m.id = k.merchant_id`,
      where: [tenantCondition(viewer, 'merchant', 'k.merchant_id')],
      createdAt: 'k.created_at',
      id: 'k.id',
    },
    f,
  );
}

export interface DisputeRow extends Cursor {
  id: number;
  merchant_id: number;
  site_id: number;
  order_id: number;
  transaction_id: number;
  chargeback_transaction_id: number;
  representment_transaction_id: number | null;
  status: string;
  network: string;
  reason_code: string;
  amount: string;
  fee: string;
  uncovered_amount: string;
  currency: string;
  evidence_text: Record<string, string> | null;
  evidence_due_at: Date;
  decide_at: Date | null;
  decided_at: Date | null;
  created_at: Date;
}

const DISPUTE_COLUMNS = sql`d.id, d.merchant_id, d.site_id, d.order_id, d.transaction_id, d.chargeback_transaction_id,
  d.representment_transaction_id, d.status, d.network, d.reason_code, d.amount, d.fee, d.uncovered_amount, d.currency,
  d.evidence_text, d.evidence_due_at, d.decide_at, d.decided_at, d.created_at FROM payments_disputes d`;

/** Chargebacks, newest first; the viewer's merchant's only (index payments_disputes_merchant). */
export function listDisputes(db: Executor, viewer: Viewer, f: Filters) {
  return pageOf<DisputeRow>(
    db,
    {
      selectFrom: DISPUTE_COLUMNS,
      where: [
        tenantCondition(viewer, 'merchant', 'd.merchant_id'),
        ...whenGiven(f, 'status', (v) => sql`d.status = ${v}`),
        ...whenGiven(f, 'transactionId', (v) => sql`d.transaction_id = ${Number(v)}`, DIGITS),
      ],
      createdAt: 'd.created_at',
      id: 'd.id',
      sequence: 'd.id',
      table: 'payments_disputes',
      amount: { column: 'd.amount', currency: 'd.currency' },
    },
    f,
  );
}

export async function getDispute(db: Executor, viewer: Viewer, id: string): Promise<DisputeRow> {
  if (!DIGITS.test(id)) throw notFound('dispute');
  const { rows } = await sql<DisputeRow>`
    SELECT d.created_at AS cursor_at, d.id::text AS cursor_id, ${DISPUTE_COLUMNS}
    WHERE d.id = ${Number(id)} AND ${tenantCondition(viewer, 'merchant', 'd.merchant_id')}`.execute(db);
  const row = rows[0];
  if (!row) throw notFound('dispute');
  return row;
}
