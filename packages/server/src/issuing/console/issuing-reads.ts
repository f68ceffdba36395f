// What the console shows of the card issuing API: customers with their KYC state and documents, accounts
// with their balances, cards (masked), card transactions with their 3-D Secure challenges, and topups.
import { sql } from 'kysely';
import { tenantCondition } from '../../platform/console/console-scope.ts';
import type { Viewer } from '../../platform/console/console-users.ts';
import { pageOf, UUID, whenGiven } from '../../platform/console/paging.ts';
import type { Executor } from '../../platform/db/database.ts';
import { ownedBy } from '../../platform/db/owner-hash.ts';
import { notFound } from '../../platform/errors/domain-error.ts';

type Filters = Record<string, string | undefined>;
interface Cursor {
  cursor_at: Date;
  cursor_id: string;
}

export const KYC_STATUSES = ['not_started', 'in_progress', 'pending_review', 'approved', 'rejected'] as const;
export const CARD_STATUSES = [
  'pending',
  'readyToBeActivated',
  'active',
  'suspended',
  'frozen',
  'closed',
] as const;

export interface IssuingCustomerRow extends Cursor {
  id: string;
  partner_id: string;
  email: string | null;
  external_user_id: string | null;
  wallet_address: string | null;
  status: string;
  two_factor_enabled: boolean;
  kyc_status: string | null;
  reject_reason: string | null;
  created_at: Date;
}

const CUSTOMER_COLUMNS = sql`c.id, c.partner_id, c.email, c.external_user_id, c.wallet_address, c.status,
  c.two_factor_enabled, k.status AS kyc_status, k.reject_reason, c.created_at
  FROM issuing_customers c LEFT JOIN issuing_kyc k ON k.customer_id = c.id`;

export function listIssuingCustomers(db: Executor, viewer: Viewer, f: Filters) {
  return pageOf<IssuingCustomerRow>(
    db,
    {
      selectFrom: CUSTOMER_COLUMNS,
      where: [
        tenantCondition(viewer, 'partner', 'c.partner_id'),
        ...whenGiven(f, 'kyc', (v) =>
          v === 'not_started' ? sql`(k.status IS NULL OR k.status = ${v})` : sql`k.status = ${v}`,
        ),
        ...whenGiven(f, 'partnerId', (v) => sql`c.partner_id = ${v}`),
        ...whenGiven(f, 'email', (v) => sql`c.email ILIKE ${`%${v.replace(/[%_\\]/g, '\\$&')}%`}`),
      ],
      createdAt: 'c.created_at',
      id: 'c.id',
    },
    f,
  );
}

export async function getIssuingCustomer(
  db: Executor,
  viewer: Viewer,
  id: string,
): Promise<IssuingCustomerRow> {
  const { rows } = await sql<IssuingCustomerRow>`
    SELECT c.created_at AS cursor_at, c.id AS cursor_id, ${CUSTOMER_COLUMNS}
    WHERE c.id = ${id} AND ${tenantCondition(viewer, 'partner', 'c.partner_id')}`.execute(db);
  const row = rows[0];
  if (!row) throw notFound('customer');
  return row;
}

export interface KycDocumentRow {
  id: string;
  kind: string;
  status: string;
  reject_reason: string | null;
  document_name: string | null;
  document_type: string | null;
  document_bytes: number | null;
  created_at: Date;
  completed_at: Date | null;
}

/** The documents a customer's KYC checks saw (their names and sizes; the bytes stay with the vendor). */
export async function kycDocumentsOf(db: Executor, customerId: string): Promise<KycDocumentRow[]> {
  const { rows } = await sql<KycDocumentRow>`
    SELECT v.id, v.kind, v.status, v.reject_reason, s.document_name, s.document_type, s.document_bytes, v.created_at,
      v.completed_at
    FROM issuing_kyc_verifications v LEFT JOIN kyc_vendor_sessions s ON s.id = v.vendor_session_id
    WHERE v.customer_id = ${customerId} ORDER BY v.created_at`.execute(db);
  return rows;
}

export interface AccountRow extends Cursor {
  id: string;
  customer_id: string;
  partner_id: string;
  currency: string;
  status: string;
  ledger_account_id: string;
  posted: string;
  pending_debits: string;
  created_at: Date;
}

export function listAccounts(db: Executor, viewer: Viewer, f: Filters) {
  return pageOf<AccountRow>(
    db,
    {
      selectFrom: sql`a.id, a.customer_id, a.partner_id, a.currency, a.status, a.ledger_account_id, l.posted,
        l.pending_debits, a.created_at FROM issuing_accounts a JOIN ledger_balances l ON l.id = a.ledger_account_id`,
      where: [
        tenantCondition(viewer, 'partner', 'a.partner_id'),
        ...whenGiven(f, 'customerId', (v) => sql`a.customer_id = ${v}`),
      ],
      createdAt: 'a.created_at',
      id: 'a.id',
    },
    f,
  );
}

export interface IssuedCardRow extends Cursor {
  id: string;
  customer_id: string;
  partner_id: string;
  account_id: string;
  product_id: string;
  is_virtual: boolean;
  label: string | null;
  status: string;
  bin: string;
  last4: string;
  expiry_month: number;
  expiry_year: number;
  created_at: Date;
  partner_name: string | null;
}

const CARD_COLUMNS = sql`k.id, k.customer_id, k.partner_id, k.account_id, k.product_id, k.is_virtual, k.label, k.status,
  k.bin, k.last4, k.expiry_month, k.expiry_year, k.created_at,
  (SELECT p.name FROM partners p WHERE p.id = k.partner_id) AS partner_name FROM issuing_cards k`;

export function listIssuedCards(db: Executor, viewer: Viewer, f: Filters) {
  return pageOf<IssuedCardRow>(
    db,
    {
      selectFrom: CARD_COLUMNS,
      where: [
        tenantCondition(viewer, 'partner', 'k.partner_id'),
        ...whenGiven(f, 'status', (v) => sql`k.status = ${v}`),
        ...whenGiven(f, 'customerId', (v) => sql`k.customer_id = ${v}`),
      ],
      createdAt: 'k.created_at',
      id: 'k.id',
    },
    f,
  );
}

export async function getIssuedCard(db: Executor, viewer: Viewer, id: string): Promise<IssuedCardRow> {
  if (!UUID.test(id)) throw notFound('card');
  const { rows } = await sql<IssuedCardRow>`
    SELECT k.created_at AS cursor_at, k.id::text AS cursor_id, ${CARD_COLUMNS}
    WHERE k.id = ${id} AND ${tenantCondition(viewer, 'partner', 'k.partner_id')}`.execute(db);
  const row = rows[0];
  if (!row) throw notFound('card');
  return row;
}

export interface CardTransactionRow extends Cursor {
  id: string;
  card_id: string;
  customer_id: string;
  type: string;
  status: string;
  amount: string;
  settled_amount: string | null;
  currency: string;
  merchant: string;
  decline_reason: string | null;
  challenge_status: string | null;
  created_at: Date;
  /** The card's name as its holder knows it: its label and last four digits (one primary-key probe) */
  card_label: string | null;
  card_last4: string | null;
}

const CARD_TRANSACTION_COLUMNS = sql`t.id, t.card_id, t.customer_id, t.type, t.status, t.amount, t.settled_amount, t.currency,
  t.merchant, t.decline_reason, c.status AS challenge_status, t.created_at,
  kc.label AS card_label, kc.last4 AS card_last4
  FROM issuing_transactions t LEFT JOIN issuing_3ds_challenges c ON c.transaction_id = t.id
  LEFT JOIN issuing_cards kc ON kc.id = t.card_id`;

export function listCardTransactions(db: Executor, viewer: Viewer, f: Filters) {
  return pageOf<CardTransactionRow>(
    db,
    {
      selectFrom: CARD_TRANSACTION_COLUMNS,
      where: [
        tenantCondition(viewer, 'partner', 't.partner_id', { hashed: true }),
        ...whenGiven(f, 'status', (v) => sql`t.status = ${v}`),
        ...whenGiven(f, 'cardId', (v) => sql`t.card_id = ${v}`, UUID),
        ...whenGiven(f, 'customerId', (v) => ownedBy('t.customer_id', v)),
      ],
      createdAt: 't.created_at',
      id: 't.id',
      sequence: 't.seq',
      table: 'issuing_transactions',
      amount: { column: 't.amount', currency: 't.currency' },
    },
    f,
  );
}

export async function getCardTransaction(
  db: Executor,
  viewer: Viewer,
  id: string,
): Promise<CardTransactionRow> {
  if (!UUID.test(id)) throw notFound('card transaction');
  const { rows } = await sql<CardTransactionRow>`
    SELECT t.created_at AS cursor_at, t.id::text AS cursor_id, ${CARD_TRANSACTION_COLUMNS}
    WHERE t.id = ${id} AND ${tenantCondition(viewer, 'partner', 't.partner_id')}`.execute(db);
  const row = rows[0];
  if (!row) throw notFound('card transaction');
  return row;
}

export interface ChallengeRow extends Cursor {
  id: string;
  transaction_id: string;
  customer_id: string;
  status: string;
  auth_type: string | null;
  amount: string;
  currency: string;
  merchant: string;
  expires_at: Date;
  decided_at: Date | null;
}

export function listChallenges(db: Executor, viewer: Viewer, f: Filters) {
  return pageOf<ChallengeRow>(
    db,
    {
      selectFrom: sql`c.id, c.transaction_id, c.customer_id, c.status, c.auth_type, t.amount, t.currency, t.merchant,
        c.expires_at, c.decided_at FROM issuing_3ds_challenges c JOIN issuing_transactions t ON t.id = c.transaction_id`,
      where: [
        tenantCondition(viewer, 'partner', 't.partner_id'),
        ...whenGiven(f, 'status', (v) => sql`c.status = ${v}`),
      ],
      createdAt: 'c.requested_at',
      id: 'c.id',
    },
    f,
  );
}

export interface TopupRow extends Cursor {
  id: string;
  customer_id: string;
  account_id: string;
  kind: string;
  method: string;
  status: string;
  currency: string;
  amount: string;
  reference: string;
  credited_amount: string | null;
  expires_at: Date;
  completed_at: Date | null;
  created_at: Date;
}

export function listTopups(db: Executor, viewer: Viewer, f: Filters) {
  return pageOf<TopupRow>(
    db,
    {
      selectFrom: sql`t.id, t.customer_id, t.account_id, t.kind, t.method, t.status, t.currency, t.amount, t.reference,
        t.credited_amount, t.expires_at, t.completed_at, t.created_at FROM issuing_topups t`,
      where: [
        tenantCondition(viewer, 'partner', 't.partner_id'),
        ...whenGiven(f, 'status', (v) => sql`t.status = ${v}`),
        ...whenGiven(f, 'customerId', (v) => sql`t.customer_id = ${v}`),
      ],
      createdAt: 't.created_at',
      id: 't.id',
    },
    f,
  );
}
