// Reads of payments card transactions (the spec's GET /transaction and /transaction/{id}), and the 3D
// Secure return leg's transaction. A transaction of another merchant, or of a site the key does not
// reach, is a 404.
import type { CapabilityTokens } from '../../platform/crypto/capability-tokens.ts';
import type { Db } from '../../platform/db/database.ts';
import { notFound } from '../../platform/errors/domain-error.ts';
import type { Page } from '../http/envelope.ts';
import { boundedTotal, checkWindow } from '../list-window.ts';
import type { MerchantScope } from '../sites.ts';
import type { TransactionDetail, TransactionFilter, TransactionRow } from './transaction-row.ts';

export class TransactionReads {
  constructor(private readonly deps: { db: Db; capabilities: CapabilityTokens }) {}

  /** A transaction as the API shows it: with its order's and customer's facts (TransactionDetail). */
  async get(merchant: MerchantScope, id: number): Promise<TransactionDetail> {
    const row = await this.detailed()
      .where('t.id', '=', id)
      .where('t.merchant_id', '=', merchant.merchantId)
      .where('t.site_id', 'in', merchant.siteIds)
      .executeTakeFirst();
    if (!row) throw notFound('transaction');
    return row;
  }

  private detailed() {
    return this.deps.db
      .selectFrom('payments_transactions as t')
      .innerJoin('payments_orders as o', 'o.id', 't.order_id')
      .innerJoin('payments_customers as c', 'c.id', 't.customer_id')
      .selectAll('t')
      .select(['o.external_order_id', 'o.description', 'o.back_url', 'c.email']);
  }

  async list(merchant: MerchantScope, f: TransactionFilter, page: Page) {
    let query = this.deps.db
      .selectFrom('payments_transactions as t')
      .innerJoin('payments_customers as c', 'c.id', 't.customer_id')
      .where('t.merchant_id', '=', merchant.merchantId);
    if (f.orderId !== undefined) query = query.where('t.order_id', '=', f.orderId);
    if (f.customerId !== undefined) query = query.where('t.customer_id', '=', f.customerId);
    if (f.email !== undefined) query = query.where('c.email', '=', f.email);
    if (f.transactionMethod !== undefined) query = query.where('t.method', '=', f.transactionMethod);
    if (f.currency !== undefined) query = query.where('t.currency', '=', f.currency);
    if (f.amountFrom !== undefined) query = query.where('t.amount', '>=', f.amountFrom.toString());
    if (f.amountTo !== undefined) query = query.where('t.amount', '<=', f.amountTo.toString());
    if (f.transactionType !== undefined) query = query.where('t.type', '=', f.transactionType);
    if (f.transactionStatus?.length) query = query.where('t.status', 'in', f.transactionStatus);
    if (f.createdAtFrom) query = query.where('t.created_at', '>=', f.createdAtFrom);
    if (f.createdAtTo) query = query.where('t.created_at', '<=', f.createdAtTo);
    checkWindow(page);
    const total = await boundedTotal(this.deps.db, query);
    const rows = await query
      .innerJoin('payments_orders as o', 'o.id', 't.order_id')
      .selectAll('t')
      .select(['o.external_order_id', 'o.description', 'o.back_url', 'c.email'])
      .orderBy('t.id', page.newestFirst ? 'desc' : 'asc')
      .limit(page.perPage)
      .offset((page.page - 1) * page.perPage)
      .execute();
    return { items: rows, total };
  }

  /** The transaction a 3D Secure return leg belongs to, with where its order sends the browser. */
  async returnLeg(token: string): Promise<
    | {
        transaction: TransactionRow;
        backUrl: string | null;
        checkout: 'hosted' | 'embedded' | null;
        siteId: number;
      }
    | undefined
  > {
    const id = Number(this.deps.capabilities.open('3ds-return', token));
    if (!Number.isSafeInteger(id) || id <= 0) return undefined;
    const transaction = await this.deps.db
      .selectFrom('payments_transactions')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    if (!transaction) return undefined;
    const order = await this.deps.db
      .selectFrom('payments_orders')
      .select(['back_url', 'checkout', 'site_id'])
      .where('id', '=', transaction.order_id)
      .executeTakeFirstOrThrow();
    return { transaction, backUrl: order.back_url, checkout: order.checkout, siteId: order.site_id };
  }
}
