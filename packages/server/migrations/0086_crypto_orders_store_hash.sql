-- A crypto order's per-store index on an 8-byte hash of the store's id (issue 54; docs/benchmarks.md, "Half
-- the WAL per write, the fourth cuts"), as a card transaction's per-owner indexes are (migration 0082):
-- (store_id, seq) held the store's text id in every entry, 103 bytes of the write-ahead log an order,
-- where (hash, seq) is a 24-byte tuple, two 8-byte values, which PostgreSQL's split of a page by a rising
-- key within a group also needs. Every read of it names the hash and the id itself
-- (platform/db/owner-hash.ts): two stores sharing a hash are both found by the index, the row's own id
-- keeps the one asked.
-- (On a large existing database, build the index with CREATE INDEX CONCURRENTLY before upgrading: the
-- migration then finds it, and only drops the old one; docs/operations.md, Upgrading a large database.)
CREATE INDEX IF NOT EXISTS crypto_orders_store_hash ON crypto_orders (hashtextextended(store_id, 0), seq);
DROP INDEX crypto_orders_store;
