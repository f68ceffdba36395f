-- No balance row that every tenant writes (docs/architecture.md, Ledger). An unbounded account (the card
-- network's receivables and settlements, the platform's revenue and payouts, a chain's wallet, a crypto
-- store's balance) has no bound to check, so a posting need not lock it: its changes are appended to
-- ledger_account_deltas and a sweep (ledger-rollup) adds them to the account's row in batches. Its
-- balance is that row plus the deltas not yet rolled up (the view ledger_balances). Bounded accounts are
-- locked and updated in place as before: their bound must be checked against the current balance.
--
-- The table has no index and no key: a posting's delta is one heap insert and nothing more. It holds
-- only what the last second posted (the sweep empties it), so the rollup and a balance read scan it.
CREATE TABLE ledger_account_deltas (
  account_id text NOT NULL,
  posted numeric(78, 0) NOT NULL,
  pending_debits numeric(78, 0) NOT NULL,
  pending_credits numeric(78, 0) NOT NULL
) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 10000);

-- The balance of every account as of one snapshot: the rolled-up row plus its deltas. The sweep moves
-- deltas into the row in one transaction, so no snapshot counts a delta twice or not at all.
CREATE VIEW ledger_balances AS
SELECT a.id, a.owner_type, a.owner_id, a.asset, a.purpose, a.is_bounded, a.created_at,
  a.posted + coalesce(d.posted, 0) AS posted,
  a.pending_debits + coalesce(d.pending_debits, 0) AS pending_debits,
  a.pending_credits + coalesce(d.pending_credits, 0) AS pending_credits
FROM ledger_accounts a
LEFT JOIN LATERAL (
  SELECT sum(x.posted) AS posted, sum(x.pending_debits) AS pending_debits, sum(x.pending_credits) AS pending_credits
  FROM ledger_account_deltas x WHERE x.account_id = a.id AND NOT a.is_bounded
) d ON true;

-- ledger_post (migration 0002) as before, except that only bounded accounts are locked and updated;
-- the unbounded ones are read without a lock (for their asset) and take a delta row each.
CREATE OR REPLACE FUNCTION ledger_post(
  p_id text,
  p_operation_id text,
  p_request_hash text,
  p_kind text,
  p_status text,
  p_hold_id text,
  p_expires_at timestamptz,
  p_metadata jsonb,
  p_created_at timestamptz,
  p_account_ids text[],
  p_posted_deltas numeric[],
  p_pending_debit_deltas numeric[],
  p_pending_credit_deltas numeric[],
  p_leg_accounts text[],
  p_leg_amounts numeric[],
  OUT outcome text,
  OUT transaction_id text,
  OUT asset text,
  OUT detail text
)
LANGUAGE plpgsql AS $$
DECLARE
  v_found integer;
  v_assets integer;
  v_short text;
  v_hash text;
  v_unbounded text[];
BEGIN
  WITH locked AS (
    SELECT l.id, l.asset, l.is_bounded, l.posted, l.pending_debits
    FROM ledger_accounts l WHERE l.id = ANY (p_account_ids) AND l.is_bounded ORDER BY l.id FOR UPDATE
  ), unlocked AS (
    SELECT l.id, l.asset, l.is_bounded, l.posted, l.pending_debits
    FROM ledger_accounts l WHERE l.id = ANY (p_account_ids) AND NOT l.is_bounded
  )
  SELECT count(*), count(DISTINCT a.asset), min(a.asset),
    min(a.id) FILTER (WHERE a.is_bounded AND (a.posted + d.posted < 0 OR a.posted + d.posted - a.pending_debits - d.pd < 0)),
    array_agg(a.id) FILTER (WHERE NOT a.is_bounded)
  INTO v_found, v_assets, asset, v_short, v_unbounded
  FROM (SELECT * FROM locked UNION ALL SELECT * FROM unlocked) a
  JOIN unnest(p_account_ids, p_posted_deltas, p_pending_debit_deltas) AS d (id, posted, pd) ON d.id = a.id;

  IF v_found <> cardinality(p_account_ids) THEN
    outcome := 'not_found';
    asset := NULL;
    detail := (SELECT min(x) FROM unnest(p_account_ids) x WHERE NOT EXISTS (SELECT 1 FROM ledger_accounts l WHERE l.id = x));
    RETURN;
  END IF;
  IF v_assets > 1 THEN
    outcome := 'asset_mismatch';
    asset := NULL;
    RETURN;
  END IF;
  IF v_short IS NOT NULL THEN
    SELECT t.id, t.request_hash INTO transaction_id, v_hash FROM ledger_transactions t WHERE t.operation_id = p_operation_id;
    asset := NULL;
    IF FOUND THEN
      outcome := CASE WHEN v_hash = p_request_hash THEN 'replay' ELSE 'mismatch' END;
    ELSE
      outcome := 'insufficient_funds';
      detail := v_short;
    END IF;
    RETURN;
  END IF;

  INSERT INTO ledger_transactions (id, operation_id, request_hash, kind, status, asset, hold_id, expires_at, metadata, created_at)
  VALUES (p_id, p_operation_id, p_request_hash, p_kind, p_status, asset, p_hold_id, p_expires_at, p_metadata, p_created_at)
  ON CONFLICT (operation_id) DO NOTHING;
  IF NOT FOUND THEN
    SELECT t.id, t.request_hash INTO transaction_id, v_hash FROM ledger_transactions t WHERE t.operation_id = p_operation_id;
    outcome := CASE WHEN v_hash = p_request_hash THEN 'replay' ELSE 'mismatch' END;
    asset := NULL;
    RETURN;
  END IF;

  v_unbounded := coalesce(v_unbounded, '{}');
  WITH balances AS (
    UPDATE ledger_accounts a
    SET posted = a.posted + d.posted, pending_debits = a.pending_debits + d.pd, pending_credits = a.pending_credits + d.pc
    FROM unnest(p_account_ids, p_posted_deltas, p_pending_debit_deltas, p_pending_credit_deltas) AS d (id, posted, pd, pc)
    WHERE a.id = d.id AND NOT (d.id = ANY (v_unbounded))
  ), deltas AS (
    INSERT INTO ledger_account_deltas (account_id, posted, pending_debits, pending_credits)
    SELECT d.id, d.posted, d.pd, d.pc
    FROM unnest(p_account_ids, p_posted_deltas, p_pending_debit_deltas, p_pending_credit_deltas) AS d (id, posted, pd, pc)
    WHERE d.id = ANY (v_unbounded)
  ), settled AS (
    UPDATE ledger_transactions SET status = 'settled', resolved_at = p_created_at WHERE id = p_hold_id
  )
  INSERT INTO ledger_entries (transaction_id, account_id, asset, amount)
  SELECT p_id, l.account_id, asset, l.amount FROM unnest(p_leg_accounts, p_leg_amounts) AS l (account_id, amount);

  outcome := 'posted';
  transaction_id := p_id;
END;
$$;

-- Moves up to p_limit deltas into their accounts' rows in one transaction; answers how many it moved.
-- Deltas of transactions still open are invisible here and stay for the next run. Postings never lock a
-- delta, and one sweep runs at a time (the sweeps' lock), so nothing else deletes them meanwhile.
CREATE FUNCTION ledger_rollup(p_limit integer, OUT moved integer)
LANGUAGE plpgsql AS $$
BEGIN
  WITH taken AS (
    DELETE FROM ledger_account_deltas
    WHERE ctid = ANY (ARRAY(SELECT ctid FROM ledger_account_deltas LIMIT p_limit))
    RETURNING account_id, posted, pending_debits, pending_credits
  ), sums AS (
    SELECT account_id, sum(posted) AS posted, sum(pending_debits) AS pd, sum(pending_credits) AS pc, count(*) AS n
    FROM taken GROUP BY account_id
  ), applied AS (
    UPDATE ledger_accounts a
    SET posted = a.posted + s.posted, pending_debits = a.pending_debits + s.pd, pending_credits = a.pending_credits + s.pc
    FROM sums s WHERE a.id = s.account_id
    RETURNING s.n
  )
  SELECT coalesce(sum(n), 0)::integer INTO moved FROM applied;
END;
$$;
