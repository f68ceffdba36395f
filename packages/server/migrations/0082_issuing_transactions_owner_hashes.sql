-- A card transaction's per-owner indexes on an 8-byte hash of the owner's id (issue 54; docs/benchmarks.md,
-- "Half the WAL per write, the third cuts"), as the risk signals' are (migration 0079). (partner_id, seq)
-- and (customer_id, seq) held the 30-character text id in every entry: 48-byte index tuples, each insert
-- 103-133 bytes of the write-ahead log, where (hash, seq) is a 24-byte tuple. Every read of them names
-- the hash and the id itself (platform/db/owner-hash.ts): two owners sharing a hash are both found by the
-- index, the row's own id keeps the one asked.
-- (On a large existing database, build the two indexes with CREATE INDEX CONCURRENTLY before upgrading:
-- the migration then finds them, and only drops the old ones; docs/operations.md, Upgrading a large
-- database.)
CREATE INDEX IF NOT EXISTS issuing_transactions_partner_hash ON issuing_transactions
  (hashtextextended(partner_id, 0), seq);
CREATE INDEX IF NOT EXISTS issuing_transactions_customer_hash ON issuing_transactions
  (hashtextextended(customer_id, 0), seq);
DROP INDEX issuing_transactions_partner, issuing_transactions_customer;
