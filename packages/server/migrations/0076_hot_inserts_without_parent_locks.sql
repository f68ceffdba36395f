-- A foreign key's check locks the row it points to (SELECT … FOR KEY SHARE): every card authorization
-- logged a 54-byte lock record on its partner, customer, card and account rows, every payments order on
-- its merchant, site and customer rows and on the order it had just inserted, every crypto order on its
-- store's row. That is 160-220 bytes of the write-ahead log per write (docs/benchmarks.md, issue 54), and a
-- write to one shared row (the partner's, the merchant's, the store's) from every concurrent write, which
-- PostgreSQL turns into a multixact once two of them hold it at once.
--
-- These references are checked where they are made instead, as the ledger's entries' have been since
-- migration 0001: each write path reads the parent rows it points to before it writes (the card with its
-- account and customer, the merchant's site and customer, the store), and none of these parents is ever
-- deleted or given another id (merchants, sites, customers and cards are closed or soft-deleted; nothing
-- in the platform deletes them), so what was read stays there.
-- The test harness checks after the suites' writes that every one of them still resolves
-- (test/harness/reference-invariants.ts). The rarer references (a payments transaction's card and
-- parent, an order's saved card, a capture's original authorization) keep their keys.
ALTER TABLE issuing_transactions
  DROP CONSTRAINT issuing_transactions_customer_id_fkey,
  DROP CONSTRAINT issuing_transactions_partner_id_fkey,
  DROP CONSTRAINT issuing_transactions_card_id_fkey,
  DROP CONSTRAINT issuing_transactions_account_id_fkey;
ALTER TABLE payments_orders
  DROP CONSTRAINT payments_orders_merchant_id_fkey,
  DROP CONSTRAINT payments_orders_site_id_fkey,
  DROP CONSTRAINT payments_orders_customer_id_fkey;
ALTER TABLE payments_transactions
  DROP CONSTRAINT payments_transactions_merchant_id_fkey,
  DROP CONSTRAINT payments_transactions_site_id_fkey,
  DROP CONSTRAINT payments_transactions_order_id_fkey,
  DROP CONSTRAINT payments_transactions_customer_id_fkey;
ALTER TABLE crypto_orders DROP CONSTRAINT crypto_orders_store_id_fkey;
