-- A ledger entry's primary key was (transaction_id, account_id): two 30-character ids in every one of its
-- index entries, some 190 bytes of the write-ahead log per leg (docs/benchmarks.md, issue 54). What reads
-- entries by their transaction (a transaction's legs, a hold's legs when it is posted, reconciliation)
-- names the transaction alone, and the one writer, ledger_post, merges a transaction's legs by account
-- before it inserts them, so no key is needed to keep them one per account. The index on the transaction
-- alone is half as wide, and btree deduplication keeps a transaction's legs as one entry once its page
-- fills; the invariant tests check that no transaction has two legs on one account.
-- (On a large existing database, build the index with CREATE INDEX CONCURRENTLY before upgrading: the
-- migration then finds it, and only drops the key; docs/operations.md, Upgrading a large database.)
CREATE INDEX IF NOT EXISTS ledger_entries_transaction ON ledger_entries (transaction_id);
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_pkey;
