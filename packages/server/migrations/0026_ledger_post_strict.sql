-- The ledger's write for a posting sent in one statement with the rest of its business step (a batch of
-- data-modifying CTEs, platform/db/statement-batch.ts): there a refusal cannot be answered as a value,
-- because the other parts of the statement are already written by then, so it raises instead and the
-- whole statement writes nothing. SQLSTATE TL001; the message is ledger_post's outcome, the detail its
-- detail (the account short of funds).
CREATE FUNCTION ledger_post_strict(
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
  OUT transaction_id text,
  OUT asset text
)
LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  SELECT * INTO r FROM ledger_post(p_id, p_operation_id, p_request_hash, p_kind, p_status, p_hold_id, p_expires_at,
    p_metadata, p_created_at, p_account_ids, p_posted_deltas, p_pending_debit_deltas, p_pending_credit_deltas,
    p_leg_accounts, p_leg_amounts);
  IF r.outcome <> 'posted' THEN
    RAISE EXCEPTION USING ERRCODE = 'TL001', MESSAGE = r.outcome, DETAIL = coalesce(r.detail, '');
  END IF;
  transaction_id := r.transaction_id;
  asset := r.asset;
END;
$$;
