// The floor of each API write path: what this stack (Node, fastify, pg, this Postgres, this machine)
// can do at best for the same work. A bare fastify route, no validation, no authentication, that
// writes exactly the rows the real path writes (same tables, indexes and contents) in one named
// prepared statement. It runs in the same process model as the server (TESSERA_WORKERS processes under
// node:cluster, the same pool size), is driven by the same client, and takes the same request bodies,
// so the ratio of a path to its floor is what Tessera's own code costs.
//
// The fixture (ids of the merchant, site, cards, accounts set up through the real API) comes in
// BENCH_FLOOR_FIXTURE as JSON; the address it listens on is printed as `floor listening on URL`.
import cluster from 'node:cluster';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import formbody from '@fastify/formbody';
import Fastify from 'fastify';
import pg from 'pg';

export interface FloorFixture {
  payments: {
    merchantId: number;
    siteId: number;
    /** The site's balance account(s): a row per shard when the balance is sharded */
    siteBalanceAccounts: string[];
    receivableAccounts: string[];
    currency: string;
  };
  issuing: {
    /** By card id: what an authorization of the card writes */
    cards: Record<
      string,
      { customerId: string; partnerId: string; accountId: string; ledgerAccountId: string; currency: string }
    >;
    settlementAccounts: string[];
  };
  crypto: { storeId: string };
  publicUrl: string;
}

const workers = Number(process.env.TESSERA_WORKERS ?? 1);
if (cluster.isPrimary && workers > 1) {
  for (let i = 0; i < workers; i++) cluster.fork();
  let printed = false;
  cluster.on('message', (_worker, message: { listening?: string }) => {
    if (message.listening && !printed) {
      printed = true;
      process.stdout.write(`floor listening on ${message.listening}\n`);
    }
  });
} else {
  await serve();
}

async function serve() {
  const fixture = JSON.parse(process.env.BENCH_FLOOR_FIXTURE ?? '{}') as FloorFixture;
  const pool = new pg.Pool({
    connectionString: process.env.DATABASE_URL,
    max: Number(process.env.TESSERA_DB_POOL_SIZE ?? 20),
    application_name: 'bench-floor',
  });
  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
  await app.register(formbody);
  app.addContentTypeParser('application/vnd.api+json', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, JSON.parse(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  const pick = <T>(items: T[]): T => items[Math.floor(Math.random() * items.length)] as T;
  const ledgerId = () => `ltx_${randomBytes(13).toString('hex')}`;
  const eventId = () => `evt_${randomBytes(13).toString('hex')}`;
  const hash = (text: string) => createHash('sha256').update(text).digest('hex');

  // payments: the order and its captured transaction (final statuses), the network's authorization, the
  // IPN event, the capture's ledger transaction with its two entries, the site's credit and the
  // receivable's delta, and the site's balance transaction (docs/payouts.md).
  const paymentsOrder = `
    WITH ids AS (
      SELECT nextval(pg_get_serial_sequence('payments_orders', 'id'))::int AS order_id,
             nextval(pg_get_serial_sequence('payments_transactions', 'id'))::int AS transaction_id
    ), o AS (
      INSERT INTO payments_orders (id, merchant_id, site_id, customer_id, order_type, status, amount, currency,
        description, card_transaction_mode, transaction_method, created_at, updated_at)
      SELECT order_id, $1, $2, $3, 'purchase', 'complete-ok', $4, $5, $6, 'authAndCapture', 'card', $7, $7 FROM ids
    ), t AS (
      INSERT INTO payments_transactions (id, merchant_id, site_id, order_id, customer_id, type, status, method, mode,
        initiator, amount, captured_amount, currency, card_brand, card_bin, card_last4, network_reference,
        created_at, updated_at)
      SELECT transaction_id, $1, $2, order_id, $3, 'deposit', 'complete-ok', 'card', 'authAndCapture', 'customer',
        $4, $4, $5, 'visa', $8, $9, $10, $7, $7 FROM ids
    ), n AS (
      INSERT INTO card_network_authorizations (reference, owner, route, currency, amount, captured, status, created_at)
      VALUES ($10, 'payments', 'simulator', $5, $4, $4, 'approved', $7)
    ), e AS (
      INSERT INTO events (id, api, tenant_id, type, payload, created_at)
      SELECT $11, 'payments', $2::text, 'transaction.complete-ok',
        json_build_object('eventId', $11::text, 'status', 'complete-ok', 'orderStatus', 'complete-ok',
          'orderType', 'purchase', 'orderId', order_id, 'externalOrderId', null, 'siteId', $2::int,
          'customerId', $3::int, 'identifier', $12::text, 'externalCustomData', null, 'customData', null,
          'customFields', null, 'timestamp', extract(epoch from $7::timestamptz)::bigint,
          'transactionId', transaction_id, 'transactionStatus', 'complete-ok', 'transactionType', 'deposit',
          'transactionMethod', 'card', 'amount', $4::numeric / 100, 'currency', $5::text, 'cardId', null)::text, $7
      FROM ids
    ), lt AS (
      INSERT INTO ledger_transactions (id, operation_id, request_hash, kind, status, asset, created_at)
      SELECT $13, 'payments-capture:' || transaction_id, $14, 'transfer', 'posted', $5, $7 FROM ids
    ), le AS (
      INSERT INTO ledger_entries (transaction_id, account_id, asset, amount)
      VALUES ($13, $15, $5, -$4::numeric), ($13, $16, $5, $4::numeric)
    ), la AS (
      -- the site's balance is bounded, but a credit cannot break its bound: an unlocked credit row (0039)
      INSERT INTO ledger_account_credits (account_id, posted, pending_credits) VALUES ($16, $4::numeric, 0)
    ), ld AS (
      -- the network's receivable is unbounded: an append-only delta (migration 0034)
      INSERT INTO ledger_account_deltas (account_id, posted, pending_debits, pending_credits)
      VALUES ($15, -$4::numeric, 0, 0)
    ), bt AS (
      INSERT INTO balance_transactions (id, owner, currency, type, source_type, source_id, gross, fee, net,
        created_at, available_at)
      SELECT $17, 'site:' || $2::int, $5, 'capture', 'transaction', transaction_id::text, $4, 0, $4, $7,
        $7::timestamptz + interval '2 days'
      FROM ids
    )
    SELECT order_id, transaction_id FROM ids`;
  app.post('/floor/payments/order', async (request, reply) => {
    const body = request.body as Record<string, string>;
    const p = fixture.payments;
    const pan = String(body.cardNumber);
    const amountMinor = Math.round(Number(body.amount) * 100);
    const { rows } = await pool.query({
      name: 'floor-payments-order',
      text: paymentsOrder,
      values: [
        p.merchantId,
        p.siteId,
        Number(body.customerId),
        amountMinor,
        p.currency,
        body.description ?? null,
        new Date(),
        pan.slice(0, 6),
        pan.slice(-4),
        `payments:${randomUUID()}`,
        eventId(),
        `bench-${body.customerId}`,
        ledgerId(),
        hash(randomUUID()),
        pick(p.receivableAccounts),
        pick(p.siteBalanceAccounts),
        `btx_${randomBytes(13).toString('hex')}`,
      ],
    });
    const row = rows[0] as { order_id: number; transaction_id: number };
    return reply.code(201).send({
      code: 201,
      message: 'Created',
      data: {
        orderId: row.order_id,
        transactionId: row.transaction_id,
        is3d: 0,
        isRedirect: false,
        orderStatus: 'complete-ok',
        transactionStatus: 'complete-ok',
      },
    });
  });

  // issuing: the authorized transaction (final status), its transactionCreated event, the hold's ledger
  // transaction with its two entries, the card account's pending debit and the settlement's delta.
  const issuingAuthorization = `
    WITH t AS (
      INSERT INTO issuing_transactions (id, customer_id, partner_id, card_id, account_id, type, status, currency,
        amount, merchant, hold_id, hold_expires_at, created_at, authorized_at, updated_at)
      VALUES ($1, $2, $3, $4, $5, 'card_payment', 'authorized', $6, $7, $8, $9, $10, $11, $11, $11)
    ), e AS (
      INSERT INTO events (id, api, tenant_id, type, payload, created_at)
      VALUES ($12, 'issuing', $3, 'transactionCreated', $13, $11)
    ), lt AS (
      INSERT INTO ledger_transactions (id, operation_id, request_hash, kind, status, asset, expires_at, created_at)
      VALUES ($9, 'issuing-auth:' || $1, $14, 'hold', 'pending', $6, $10, $11)
    ), le AS (
      INSERT INTO ledger_entries (transaction_id, account_id, asset, amount)
      VALUES ($9, $15, $6, -$7::numeric), ($9, $16, $6, $7::numeric)
    ), ld AS (
      -- the network's settlement is unbounded: an append-only delta (migration 0034)
      INSERT INTO ledger_account_deltas (account_id, posted, pending_debits, pending_credits)
      VALUES ($16, 0, 0, $7::numeric)
    )
    -- the card's account is bounded: locked and updated in place
    UPDATE ledger_accounts a SET pending_debits = a.pending_debits + $7::numeric
    FROM (SELECT l.id FROM ledger_accounts l WHERE l.id = $15 FOR UPDATE OF l) AS d WHERE a.id = d.id`;
  app.post('/floor/issuing/authorizations', async (request, reply) => {
    const body = request.body as { cardId: string; amount: string; currency: string; merchant: string };
    const card = fixture.issuing.cards[body.cardId];
    if (!card) return reply.code(404).send({ error: 'no such card in the fixture' });
    const id = randomUUID();
    const now = new Date();
    const holdId = ledgerId();
    const evt = eventId();
    const amountMinor = Math.round(Number(body.amount) * 100);
    await pool.query({
      name: 'floor-issuing-authorization',
      text: issuingAuthorization,
      values: [
        id,
        card.customerId,
        card.partnerId,
        body.cardId,
        card.accountId,
        card.currency,
        amountMinor,
        body.merchant,
        holdId,
        new Date(now.getTime() + 7 * 24 * 3600 * 1000),
        now,
        evt,
        JSON.stringify({
          eventType: 'transactionCreated',
          eventId: evt,
          customerId: card.customerId,
          data: { transactionId: id },
        }),
        hash(id),
        card.ledgerAccountId,
        pick(fixture.issuing.settlementAccounts),
      ],
    });
    return reply.code(201).send({
      transactionId: id,
      cardId: body.cardId,
      status: 'authorized',
      amount: body.amount,
      currency: card.currency,
      merchant: body.merchant,
      createdAt: now.toISOString(),
    });
  });

  // crypto: the order row.
  const cryptoOrder = `
    INSERT INTO crypto_orders (id, store_id, reference, status, currency, total, amount_details, line_items, customer,
      return_url, cancel_url, callback_url, expires_at, created_at, updated_at)
    VALUES ($1, $2, $3, 'pending', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)`;
  app.post('/floor/crypto/orders', async (request, reply) => {
    type Body = {
      data: {
        attributes: {
          order: {
            reference: string;
            amount: { total: string; currency: string; details?: unknown };
            return_urls: { return_url: string; cancel_url?: string; callback_url?: string };
            line_items?: unknown[];
          };
          customer: unknown;
        };
      };
    };
    const { order, customer } = (request.body as Body).data.attributes;
    const id = randomUUID();
    const now = new Date();
    await pool.query({
      name: 'floor-crypto-order',
      text: cryptoOrder,
      values: [
        id,
        fixture.crypto.storeId,
        order.reference,
        order.amount.currency,
        Math.round(Number(order.amount.total) * 100),
        JSON.stringify(order.amount.details ?? null),
        JSON.stringify(order.line_items ?? []),
        JSON.stringify(customer),
        order.return_urls.return_url,
        order.return_urls.cancel_url ?? null,
        order.return_urls.callback_url ?? null,
        new Date(now.getTime() + 15 * 60 * 1000),
        now,
      ],
    });
    return reply.code(201).send({
      data: {
        type: 'orders_redirect',
        id,
        attributes: { redirect_url: `${fixture.publicUrl}/crypto/pay/${id}` },
      },
    });
  });

  const address = await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
  if (cluster.isWorker) process.send?.({ listening: address });
  else process.stdout.write(`floor listening on ${address}\n`);
}
