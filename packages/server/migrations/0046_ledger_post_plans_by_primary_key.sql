-- ledger_post (migration 0045) with every account read by its primary key, and ledger_post_strict
-- (migration 0026) calling it as an expression (docs/benchmarks.md, Ledger plans that do not depend on
-- statistics).
--
-- The lock read was one statement over the debited accounts (`id = ANY (...) ... ORDER BY id FOR UPDATE`),
-- planned once per connection as a generic plan. Against a ledger_accounts table not yet analyzed (a new
-- installation, the bench's accounts, any table grown since its last analyze) that plan was a sequential
-- scan: every transfer read the whole table, under a profile as a quarter of the function, until an
-- autoanalyze replanned it. Now each debited bounded account is locked by its own primary-key statement,
-- in id order as before (the ids sorted first when there are several), and each other account read by
-- its own. A key lookup can still be planned as a scan when the statistics say the table is tiny (an
-- installation's first accounts, a copy of a database analyzed while nearly empty), so the function also
-- runs with `enable_seqscan = off`: every statement in it has an index that serves it, and it is planned
-- on that index whatever the statistics say. Locks, order, checks, outcomes and rows are unchanged.
--
-- ledger_post_strict read ledger_post's answer with `SELECT * INTO r FROM ledger_post(...)`, a statement
-- with its own executor start and a function scan; `r := ledger_post(...)` is a PL/pgSQL simple expression,
-- evaluated without either. Same call, same answer.
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
  IF cardinality(v_changed) > 1 THEN
    v_changed := ARRAY(SELECT x FROM unnest(v_changed) x ORDER BY x);
  END IF;
  FOREACH v_account IN ARRAY v_changed LOOP
    SELECT l.asset, l.posted, l.pending_debits, l.pending_credits INTO r
    FROM ledger_accounts l WHERE l.id = v_account AND l.is_bounded FOR UPDATE;
    CONTINUE WHEN NOT FOUND;
    i := array_position(p_account_ids, v_account);
    v_found := v_found + 1;
    v_mixed := v_mixed OR r.asset <> coalesce(asset, r.asset);
    asset := coalesce(asset, r.asset);
    v_locked := v_locked || v_account;
    IF r.posted + p_posted_deltas[i] < 0 OR r.posted + p_posted_deltas[i] - r.pending_debits - p_pending_debit_deltas[i] < 0
      OR r.pending_credits + p_pending_credit_deltas[i] < 0 THEN
      v_unfolded := coalesce(v_unfolded, '{}') || v_account;
    END IF;
  END LOOP;
  FOREACH v_account IN ARRAY p_account_ids LOOP
    CONTINUE WHEN v_account = ANY (v_locked);
    SELECT l.asset, l.is_bounded INTO r FROM ledger_accounts l WHERE l.id = v_account;
    CONTINUE WHEN NOT FOUND;
    v_found := v_found + 1;
    v_mixed := v_mixed OR r.asset <> coalesce(asset, r.asset);
    asset := coalesce(asset, r.asset);
    IF r.is_bounded THEN v_credited := v_credited || v_account; ELSE v_unbounded := v_unbounded || v_account; END IF;
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

ALTER FUNCTION ledger_post SET plan_cache_mode = force_generic_plan SET enable_seqscan = off;

CREATE OR REPLACE FUNCTION ledger_post_strict(
  p_id text, p_operation_id text, p_request_hash text, p_kind text, p_status text, p_hold_id text,
  p_expires_at timestamptz, p_metadata jsonb, p_created_at timestamptz, p_account_ids text[],
  p_posted_deltas numeric[], p_pending_debit_deltas numeric[], p_pending_credit_deltas numeric[],
  p_leg_accounts text[], p_leg_amounts numeric[], OUT transaction_id text, OUT asset text)
LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  r := ledger_post(p_id, p_operation_id, p_request_hash, p_kind, p_status, p_hold_id, p_expires_at,
    p_metadata, p_created_at, p_account_ids, p_posted_deltas, p_pending_debit_deltas, p_pending_credit_deltas,
    p_leg_accounts, p_leg_amounts);
  IF r.outcome <> 'posted' THEN
    RAISE EXCEPTION USING ERRCODE = 'TL001', MESSAGE = r.outcome, DETAIL = coalesce(r.detail, '');
  END IF;
  transaction_id := r.transaction_id;
  asset := r.asset;
END;
$$;
