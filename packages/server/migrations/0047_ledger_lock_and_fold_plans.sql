-- ledger_lock and ledger_fold (migration 0039) planned like ledger_post (migration 0046): on the accounts'
-- key, whatever the statistics say (docs/benchmarks.md, Ledger plans that do not depend on statistics).
--
-- A function's statements are planned once per connection and their plans kept. 0046 had ledger_post plan
-- its own statements with sequential scans off, but ledger_fold, which a posting calls when a debit needs
-- the credits waiting for an account, kept whatever plan it had made first: on a connection that had locked
-- accounts outside a posting (lockBounded releasing a hold, drawing on shards), planned while
-- ledger_accounts looked tiny or had not been analyzed, that was a scan of every account, reused by every
-- posting after it. Each statement of both functions has an index that serves it (ledger_accounts' key,
-- ledger_account_credits' account index), so they now run with sequential scans off too.
ALTER FUNCTION ledger_fold(text[]) SET enable_seqscan = off;
ALTER FUNCTION ledger_lock(text[]) SET enable_seqscan = off;
