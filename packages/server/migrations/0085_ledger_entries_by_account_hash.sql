-- A ledger entry's per-account index on an 8-byte hash of the account's id (issue 54; docs/benchmarks.md,
-- "Half the WAL per write, the fourth cuts"), as a card transaction's per-owner indexes are (migration
-- 0082): (account_id, transaction_id) held two 30-character text ids in every entry, 185 bytes of the
-- write-ahead log an entry with its share of the page splits, two entries on every posting. Every read of
-- it names the hash and the id itself (platform/db/owner-hash.ts): two accounts sharing a hash are both
-- found by the index, the row's own id keeps the one asked. Within an account the entries stay in the
-- order of their transactions' ids, which grow with time, so an account's page of entries reads as before.
-- (On a large existing database, build the index with CREATE INDEX CONCURRENTLY before upgrading: the
-- migration then finds it, and only drops the old one; docs/operations.md, Upgrading a large database.)
CREATE INDEX IF NOT EXISTS ledger_entries_account_hash ON ledger_entries
  (hashtextextended(account_id, 0), transaction_id);
DROP INDEX ledger_entries_account_transaction;
