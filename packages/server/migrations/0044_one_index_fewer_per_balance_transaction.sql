-- Every captured payment, settled crypto payment and fee writes a balance transaction; each index on the
-- table is WAL written on that hot path (docs/benchmarks.md, Many cores: the write paths are bound by the
-- WAL's flush on many cores). What is not yet available (the balance's pending and reserved parts) is
-- read with `payout_id IS NULL` — a payout pays only what is available, so a row not yet available is
-- never paid — and is served by balance_transactions_unpaid, the index the payout run reads. The full
-- index on the same columns is no longer read.
DROP INDEX IF EXISTS balance_transactions_availability;
