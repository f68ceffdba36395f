-- A one-statement write that relies on facts read earlier (a card known to be active, say) checks them in
-- the same statement: a guard part selects statement_guard(<the condition>, <why>), which raises when the
-- condition no longer holds, and then nothing of the statement is written. SQLSTATE TG001; the message
-- says which fact failed.
CREATE FUNCTION statement_guard(ok boolean, reason text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  IF ok IS NOT TRUE THEN
    RAISE EXCEPTION USING ERRCODE = 'TG001', MESSAGE = reason;
  END IF;
  RETURN true;
END;
$$;
