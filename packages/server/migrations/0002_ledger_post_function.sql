-- The ledger's one write path for new transactions, as a function: one round trip, plans cached per
-- session. It locks the accounts in id order (no deadlocks), checks bounds, and writes the transaction,
-- balances and entries. Refusals are returned as outcomes, not raised, so nothing is written and the
-- caller's transaction stays usable (an authorization can record its own decline).
CREATE FUNCTION ledger_post(
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
BEGIN
  -- Locks in id order (LockRows sits above the sort), then checks every bound in the same statement.
  SELECT count(*), count(DISTINCT a.asset), min(a.asset),
    min(a.id) FILTER (WHERE a.is_bounded AND (a.posted + d.posted < 0 OR a.posted + d.posted - a.pending_debits - d.pd < 0))
  INTO v_found, v_assets, asset, v_short
  FROM (
    SELECT l.id, l.asset, l.is_bounded, l.posted, l.pending_debits
    FROM ledger_accounts l WHERE l.id = ANY (p_account_ids) ORDER BY l.id FOR UPDATE
  ) a
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
    -- Spent already? A replay of a spend must succeed even after its funds are gone.
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

  -- The unique operation id is the idempotency claim; a duplicate (concurrent or later) finds the first.
  INSERT INTO ledger_transactions (id, operation_id, request_hash, kind, status, asset, hold_id, expires_at, metadata, created_at)
  VALUES (p_id, p_operation_id, p_request_hash, p_kind, p_status, asset, p_hold_id, p_expires_at, p_metadata, p_created_at)
  ON CONFLICT (operation_id) DO NOTHING;
  IF NOT FOUND THEN
    SELECT t.id, t.request_hash INTO transaction_id, v_hash FROM ledger_transactions t WHERE t.operation_id = p_operation_id;
    outcome := CASE WHEN v_hash = p_request_hash THEN 'replay' ELSE 'mismatch' END;
    asset := NULL;
    RETURN;
  END IF;

  WITH balances AS (
    UPDATE ledger_accounts a
    SET posted = a.posted + d.posted, pending_debits = a.pending_debits + d.pd, pending_credits = a.pending_credits + d.pc
    FROM unnest(p_account_ids, p_posted_deltas, p_pending_debit_deltas, p_pending_credit_deltas) AS d (id, posted, pd, pc)
    WHERE a.id = d.id
  ), settled AS (
    UPDATE ledger_transactions SET status = 'settled', resolved_at = p_created_at WHERE id = p_hold_id
  )
  INSERT INTO ledger_entries (transaction_id, account_id, asset, amount)
  SELECT p_id, l.account_id, asset, l.amount FROM unnest(p_leg_accounts, p_leg_amounts) AS l (account_id, amount);

  outcome := 'posted';
  transaction_id := p_id;
END;
$$;
