-- A risk signal's velocity and backtest indexes on an 8-byte hash of what they are searched by, instead of
-- the text itself (docs/risk.md, Reads at scale; docs/benchmarks.md, issue 54). Every signal wrote up to
-- five btree entries of (tenant, key, at): a 30-character tenant id and a key of up to 64 characters (a
-- card's fingerprint, an email) in each, some 100 bytes of the write-ahead log per entry more than an
-- 8-byte hash and the time need. Every read of these indexes names the tenant, the decision point and the
-- key's value (velocity.ts, the backtests), so the index is on hashtextextended() of the three joined by a
-- space (tenant ids and point names have none), and the read names the same expression beside the
-- columns themselves: a hash that two keys share finds both, and the row's own columns keep the one asked.
-- The decision point is now in every per-key index, so a key's probe skips the other points' signals
-- instead of reading them from the table to drop them.
-- (On a large existing database, build the five indexes with CREATE INDEX CONCURRENTLY before upgrading:
-- the migration then finds them, and only drops the old ones; docs/operations.md, Upgrading a large
-- database.)
CREATE INDEX IF NOT EXISTS risk_signals_point_hash ON risk_signals
  (hashtextextended(tenant || ' ' || decision_point, 0), at);
CREATE INDEX IF NOT EXISTS risk_signals_ip_hash ON risk_signals
  (hashtextextended(tenant || ' ' || decision_point || ' ' || ip, 0), at) WHERE ip IS NOT NULL;
CREATE INDEX IF NOT EXISTS risk_signals_email_hash ON risk_signals
  (hashtextextended(tenant || ' ' || decision_point || ' ' || email, 0), at) WHERE email IS NOT NULL;
CREATE INDEX IF NOT EXISTS risk_signals_card_hash ON risk_signals
  (hashtextextended(tenant || ' ' || decision_point || ' ' || card_fingerprint, 0), at)
  WHERE card_fingerprint IS NOT NULL;
CREATE INDEX IF NOT EXISTS risk_signals_customer_hash ON risk_signals
  (hashtextextended(tenant || ' ' || decision_point || ' ' || customer_id, 0), at) WHERE customer_id IS NOT NULL;
DROP INDEX risk_signals_tenant, risk_signals_ip, risk_signals_email, risk_signals_card, risk_signals_customer;
