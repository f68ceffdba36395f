-- ledger_post (migration 0043) with the accounts read, checked and written one by one (docs/benchmarks.md,
-- Ledger account by account). A posting touches two to four accounts; for so few, a statement per account
-- with a primary-key plan costs Postgres less than one statement over all of them joined to the unnested
-- arrays. Measured in one backend, calls in a loop without their commits (so the function alone), per
-- transfer: between two bounded accounts about 480 -> 410 µs, from an unbounded account into a bounded one
-- (as a capture posts) about 395 -> 340 µs. The dearest statement was the read: a union of the locked and
-- the unlocked accounts joined to four unnested arrays and aggregated with filters (about 135 µs).
-- Nothing else changes: the same locks in the same order (the bounded accounts a posting debits, by id),
-- the same checks and outcomes, the same rows.
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
  v_found integer := 0;
  v_mixed boolean := false;
  v_short text;
  v_hash text;
  v_changed text[] := '{}';
  v_locked text[] := '{}';
  v_credited text[] := '{}';
  v_unfolded text[];
  v_unbounded text[] := '{}';
  v_account text;
  i integer;
  r record;
BEGIN
  -- the accounts whose change is not a pure credit: the bounded ones among them are locked
  FOR i IN 1 .. cardinality(p_account_ids) LOOP
    IF p_posted_deltas[i] < 0 OR p_pending_debit_deltas[i] <> 0 OR p_pending_credit_deltas[i] < 0 THEN
      v_changed := v_changed || p_account_ids[i];
    END IF;
  END LOOP;
  IF cardinality(v_changed) > 0 THEN
    FOR r IN SELECT l.id, l.asset, l.posted, l.pending_debits, l.pending_credits
      FROM ledger_accounts l WHERE l.id = ANY (v_changed) AND l.is_bounded ORDER BY l.id FOR UPDATE
    LOOP
      i := array_position(p_account_ids, r.id);
      v_found := v_found + 1;
      v_mixed := v_mixed OR r.asset <> coalesce(asset, r.asset);
      asset := coalesce(asset, r.asset);
      v_locked := v_locked || r.id;
      IF r.posted + p_posted_deltas[i] < 0 OR r.posted + p_posted_deltas[i] - r.pending_debits - p_pending_debit_deltas[i] < 0
        OR r.pending_credits + p_pending_credit_deltas[i] < 0 THEN
        v_unfolded := coalesce(v_unfolded, '{}') || r.id;
      END IF;
    END LOOP;
  END IF;
  FOR r IN SELECT l.id, l.asset, l.is_bounded FROM ledger_accounts l
    WHERE l.id = ANY (p_account_ids) AND NOT (l.is_bounded AND l.id = ANY (v_changed))
  LOOP
    v_found := v_found + 1;
    v_mixed := v_mixed OR r.asset <> coalesce(asset, r.asset);
    asset := coalesce(asset, r.asset);
    IF r.is_bounded THEN v_credited := v_credited || r.id; ELSE v_unbounded := v_unbounded || r.id; END IF;
  END LOOP;

  IF v_found <> cardinality(p_account_ids) THEN
    outcome := 'not_found';
    asset := NULL;
    detail := (SELECT min(x) FROM unnest(p_account_ids) x WHERE NOT EXISTS (SELECT 1 FROM ledger_accounts l WHERE l.id = x));
    RETURN;
  END IF;
  IF v_mixed THEN
    outcome := 'asset_mismatch';
    asset := NULL;
    RETURN;
  END IF;

  IF v_unfolded IS NOT NULL THEN
    -- a statement of its own, after the locks were granted (ledger_fold), then the bound checked again
    PERFORM ledger_fold(v_unfolded);
    SELECT min(l.id) INTO v_short
    FROM ledger_accounts l
    JOIN unnest(p_account_ids, p_posted_deltas, p_pending_debit_deltas) AS d (id, posted, pd) ON d.id = l.id
    WHERE l.id = ANY (v_unfolded) AND (l.posted + d.posted < 0 OR l.posted + d.posted - l.pending_debits - d.pd < 0);
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

  FOREACH v_account IN ARRAY v_locked LOOP
    i := array_position(p_account_ids, v_account);
    UPDATE ledger_accounts a SET posted = a.posted + p_posted_deltas[i], pending_debits = a.pending_debits + p_pending_debit_deltas[i],
      pending_credits = a.pending_credits + p_pending_credit_deltas[i]
    WHERE a.id = v_account;
  END LOOP;
  FOREACH v_account IN ARRAY v_credited LOOP
    i := array_position(p_account_ids, v_account);
    INSERT INTO ledger_account_credits (account_id, posted, pending_credits) VALUES (v_account, p_posted_deltas[i], p_pending_credit_deltas[i]);
  END LOOP;
  FOREACH v_account IN ARRAY v_unbounded LOOP
    i := array_position(p_account_ids, v_account);
    INSERT INTO ledger_account_deltas (account_id, posted, pending_debits, pending_credits)
    VALUES (v_account, p_posted_deltas[i], p_pending_debit_deltas[i], p_pending_credit_deltas[i]);
  END LOOP;
  IF p_hold_id IS NOT NULL THEN
    UPDATE ledger_transactions SET status = 'settled', resolved_at = p_created_at WHERE id = p_hold_id;
  END IF;
  INSERT INTO ledger_entries (transaction_id, account_id, asset, amount)
  SELECT p_id, l.account_id, asset, l.amount FROM unnest(p_leg_accounts, p_leg_amounts) AS l (account_id, amount);

  outcome := 'posted';
  transaction_id := p_id;
END;
$$;

ALTER FUNCTION ledger_post SET plan_cache_mode = force_generic_plan;
