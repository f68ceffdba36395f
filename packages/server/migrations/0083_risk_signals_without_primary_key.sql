-- A risk signal's primary key was an index no read searches (issue 54; docs/benchmarks.md, "Half the WAL
-- per write, the third cuts"): 66 bytes of the write-ahead log on every card authorization, payments
-- charge and crypto order. Signals are only appended, read by their hashed keys and time (migration 0079,
-- the BRIN index on `at`), joined to each other by id only inside a backtest's own sorted stages, and
-- deleted by the retention sweep, which now names them by their place (ctid) as the keys' purge does. The
-- id stays unique by its identity sequence. With no key, the table's replica identity is the full row, so a
-- logical replica (if an operator adds one) still receives the sweep's deletes.
ALTER TABLE risk_signals DROP CONSTRAINT risk_signals_pkey;
ALTER TABLE risk_signals REPLICA IDENTITY FULL;
