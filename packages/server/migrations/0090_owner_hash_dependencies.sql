-- The planner told that an owner's hash follows from the owner's id (issue 54; docs/benchmarks.md, "Half
-- the WAL per write, the fifth cuts"). Every read of an index on hashtextextended(owner, 0) names the hash
-- and the id (platform/db/owner-hash.ts); without these statistics Postgres multiplies the two conditions'
-- selectivities as if independent and takes a tenant with a thousand events for one with none, choosing a
-- bitmap scan and a sort of all its rows over reading its index backward for one page (EXPLAIN ANALYZE over
-- 2,050,000 events: 27 ms against 0.28 ms). Functional-dependency statistics are gathered by ANALYZE and
-- cost the writes nothing.
CREATE STATISTICS IF NOT EXISTS events_tenant_hash_dependency (dependencies)
  ON tenant_id, hashtextextended(tenant_id, 0) FROM events;
CREATE STATISTICS IF NOT EXISTS issuing_transactions_partner_hash_dependency (dependencies)
  ON partner_id, hashtextextended(partner_id, 0) FROM issuing_transactions;
CREATE STATISTICS IF NOT EXISTS issuing_transactions_customer_hash_dependency (dependencies)
  ON customer_id, hashtextextended(customer_id, 0) FROM issuing_transactions;
CREATE STATISTICS IF NOT EXISTS ledger_entries_account_hash_dependency (dependencies)
  ON account_id, hashtextextended(account_id, 0) FROM ledger_entries;
CREATE STATISTICS IF NOT EXISTS crypto_orders_store_hash_dependency (dependencies)
  ON store_id, hashtextextended(store_id, 0) FROM crypto_orders;
