-- An authorization and a compliance hold on the card's holder, ordered (docs/compliance.md, Holds): the
-- hold suspends the holder's cards and then locks their accounts' ledger rows, which every authorization
-- locks to place its hold. This reads the card's and its account's statuses under that same lock, in a
-- query of its own (a volatile function's query sees what committed before it, not the calling
-- statement's snapshot): an authorization that takes the lock first commits before the hold does, and one
-- that waited for it sees the card suspended. No authorization is approved after the hold commits.
CREATE FUNCTION issuing_card_usable_now(p_card uuid, p_ledger_account text) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM 1 FROM ledger_accounts WHERE id = p_ledger_account FOR UPDATE;
  RETURN EXISTS (
    SELECT 1 FROM issuing_cards c JOIN issuing_accounts a ON a.id = c.account_id
    WHERE c.id = p_card AND c.status = 'active' AND a.status = 'open');
END;
$$;
