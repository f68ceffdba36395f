-- A credit needs no lock (docs/architecture.md, Ledger). A bounded account's bound (posted >= 0, posted -
-- pending debits >= 0) can only be broken by a change that lowers posted or raises pending debits; a
-- change that only raises posted and pending credits cannot break it, so it need not wait for the
-- account's lock either. Such credits to a bounded account (a busy site's balance, a card account topped
-- up) are appended to ledger_account_credits instead of updating the locked row: a hot account taking
-- payments all day no longer queues every payment behind the one before.
--
-- A credit waits there until a change under the account's lock cannot be taken by the row alone (a
-- debit or a hold larger than the row holds), which folds the waiting credits into the row and checks the
-- bound again, or until the ledger-rollup sweep folds them (accounts nobody holds) — so a debit never
-- misses a committed credit, and the row's CHECK stays the last line of defence.
-- Unlike ledger_account_deltas (unbounded accounts, never locked, rolled up blindly), these are looked up
-- by account, hence the index.
CREATE TABLE ledger_account_credits (
  account_id text NOT NULL,
  posted numeric(78, 0) NOT NULL CHECK (posted >= 0),
  pending_credits numeric(78, 0) NOT NULL CHECK (pending_credits >= 0)
) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 10000);
CREATE INDEX ledger_account_credits_account ON ledger_account_credits (account_id);

-- Folds the credits waiting for these accounts into their rows; answers how many it folded. The caller
-- holds the accounts' locks (taken in id order, like every posting's), and calls this as a statement of
-- its own after they were granted: its snapshot then sees every credit committed before, and no one else
-- folds the same accounts meanwhile.
CREATE FUNCTION ledger_fold(p_ids text[], OUT folded integer)
LANGUAGE plpgsql AS $$
BEGIN
  WITH taken AS (
    DELETE FROM ledger_account_credits c WHERE c.account_id = ANY (p_ids)
    RETURNING c.account_id, c.posted, c.pending_credits
  ), sums AS (
    SELECT account_id, sum(posted) AS posted, sum(pending_credits) AS pc, count(*) AS n FROM taken GROUP BY account_id
  ), applied AS (
    UPDATE ledger_accounts a SET posted = a.posted + s.posted, pending_credits = a.pending_credits + s.pc
    FROM sums s WHERE a.id = s.account_id AND a.id = ANY (p_ids)
    RETURNING s.n
  )
  SELECT coalesce(sum(n), 0)::integer INTO folded FROM applied;
END;
$$;

-- Locks the bounded ones of these accounts in id order and folds their waiting credits (the ledger's
-- lockBounded: releasing a hold, drawing on shards, closing an account).
CREATE FUNCTION ledger_lock(p_ids text[], OUT folded integer)
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM ledger_accounts WHERE id = ANY (p_ids) AND is_bounded ORDER BY id FOR UPDATE;
  folded := ledger_fold(p_ids);
END;
$$;

CREATE OR REPLACE VIEW ledger_balances AS
SELECT a.id, a.owner_type, a.owner_id, a.asset, a.purpose, a.is_bounded, a.created_at,
  a.posted + coalesce(d.posted, 0) + coalesce(c.posted, 0) AS posted,
  a.pending_debits + coalesce(d.pending_debits, 0) AS pending_debits,
  a.pending_credits + coalesce(d.pending_credits, 0) + coalesce(c.pending_credits, 0) AS pending_credits
FROM ledger_accounts a
LEFT JOIN LATERAL (
  SELECT sum(x.posted) AS posted, sum(x.pending_debits) AS pending_debits, sum(x.pending_credits) AS pending_credits
  FROM ledger_account_deltas x WHERE x.account_id = a.id AND NOT a.is_bounded
) d ON true
LEFT JOIN LATERAL (
  SELECT sum(y.posted) AS posted, sum(y.pending_credits) AS pending_credits
  FROM ledger_account_credits y WHERE y.account_id = a.id AND a.is_bounded
) c ON true;

-- ledger_post (migrations 0002, 0034) with three kinds of account change: an unbounded account takes a
-- delta; a bounded account's pure credit (posted and pending credits up, pending debits unchanged) takes a
-- credit row, unlocked; every other change of a bounded account is made under its lock and checked
-- against its bound. Only when the locked row alone cannot take the change are the credits waiting for
-- it folded in (and the bound checked again): most debits draw on what the row already holds and never
-- touch the credits.
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
  v_changed text[];
  v_locked text[];
  v_credited text[];
  v_unfolded text[];
BEGIN
  -- the accounts whose change is not a pure credit: the bounded ones among them are locked
  v_changed := ARRAY(
    SELECT d.id FROM unnest(p_account_ids, p_posted_deltas, p_pending_debit_deltas, p_pending_credit_deltas) AS d (id, posted, pd, pc)
    WHERE NOT (d.posted >= 0 AND d.pd = 0 AND d.pc >= 0)
  );
  WITH locked AS (
    SELECT l.id, l.asset, l.is_bounded, true AS is_locked, l.posted, l.pending_debits, l.pending_credits
    FROM ledger_accounts l WHERE l.id = ANY (v_changed) AND l.is_bounded ORDER BY l.id FOR UPDATE
  ), unlocked AS (
    SELECT l.id, l.asset, l.is_bounded, false AS is_locked, l.posted, l.pending_debits, l.pending_credits
    FROM ledger_accounts l WHERE l.id = ANY (p_account_ids) AND NOT (l.is_bounded AND l.id = ANY (v_changed))
  )
  SELECT count(*), count(DISTINCT a.asset), min(a.asset),
    array_agg(a.id) FILTER (WHERE a.is_locked),
    array_agg(a.id) FILTER (WHERE a.is_bounded AND NOT a.is_locked),
    array_agg(a.id) FILTER (WHERE a.is_locked AND (a.posted + d.posted < 0
      OR a.posted + d.posted - a.pending_debits - d.pd < 0 OR a.pending_credits + d.pc < 0))
  INTO v_found, v_assets, asset, v_locked, v_credited, v_unfolded
  FROM (SELECT * FROM locked UNION ALL SELECT * FROM unlocked) a
  JOIN unnest(p_account_ids, p_posted_deltas, p_pending_debit_deltas, p_pending_credit_deltas) AS d (id, posted, pd, pc)
    ON d.id = a.id;

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
  v_locked := coalesce(v_locked, '{}');
  v_credited := coalesce(v_credited, '{}');

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

  WITH changes AS (
    SELECT d.id, d.posted, d.pd, d.pc
    FROM unnest(p_account_ids, p_posted_deltas, p_pending_debit_deltas, p_pending_credit_deltas) AS d (id, posted, pd, pc)
  ), balances AS (
    UPDATE ledger_accounts a
    SET posted = a.posted + c.posted, pending_debits = a.pending_debits + c.pd, pending_credits = a.pending_credits + c.pc
    FROM changes c WHERE a.id = c.id AND a.id = ANY (v_locked)
  ), credits AS (
    INSERT INTO ledger_account_credits (account_id, posted, pending_credits)
    SELECT c.id, c.posted, c.pc FROM changes c WHERE c.id = ANY (v_credited)
  ), deltas AS (
    INSERT INTO ledger_account_deltas (account_id, posted, pending_debits, pending_credits)
    SELECT c.id, c.posted, c.pd, c.pc FROM changes c WHERE NOT (c.id = ANY (v_locked) OR c.id = ANY (v_credited))
  ), settled AS (
    UPDATE ledger_transactions SET status = 'settled', resolved_at = p_created_at WHERE id = p_hold_id
  )
  INSERT INTO ledger_entries (transaction_id, account_id, asset, amount)
  SELECT p_id, l.account_id, asset, l.amount FROM unnest(p_leg_accounts, p_leg_amounts) AS l (account_id, amount);

  outcome := 'posted';
  transaction_id := p_id;
END;
$$;

-- The rollup (migration 0034) also folds the credits waiting for bounded accounts: those of up to p_limit
-- accounts at a time that no one else holds (SKIP LOCKED: a posting that holds an account folds its
-- credits itself), so an account only ever credited (a site between payouts) keeps a short list. Every
-- fold takes the account's lock before its credits, so no two can deadlock.
CREATE OR REPLACE FUNCTION ledger_rollup(p_limit integer, OUT moved integer)
LANGUAGE plpgsql AS $$
DECLARE
  v_ids text[];
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

  v_ids := ARRAY(
    SELECT l.id FROM ledger_accounts l
    WHERE l.id = ANY (ARRAY(SELECT DISTINCT c.account_id FROM ledger_account_credits c LIMIT p_limit))
    ORDER BY l.id FOR UPDATE SKIP LOCKED
  );
  moved := moved + ledger_fold(v_ids);
END;
$$;

-- Plan once per session. With its array arguments a statement's generic plan is estimated dearer than a
-- plan for the actual two or three accounts, so the plan cache would re-plan every statement on every
-- call (most of a posting's time); the generic plans use the same index scans.
ALTER FUNCTION ledger_post SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION ledger_fold SET plan_cache_mode = force_generic_plan;
