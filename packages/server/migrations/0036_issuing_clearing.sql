-- Clearing that differs from the authorization (docs/issuing.md, Clearing): a clearing may come in parts,
-- above the authorized amount within a tolerance, after the hold lapsed, or with no authorization at all
-- (a force post); a merchant's refund is its own credit transaction tied to the payment it refunds.
ALTER TABLE issuing_transactions
  -- what is still held for the clearings to come (0 once cleared, reversed or lapsed; null: never held)
  ADD COLUMN held_amount numeric(78, 0) CHECK (held_amount >= 0),
  -- the refunds of this payment so far; never more than what was cleared (checked under the row's lock)
  ADD COLUMN refunded_amount numeric(78, 0) NOT NULL DEFAULT 0 CHECK (refunded_amount >= 0),
  -- the clearing parts posted so far (each part's ledger operation is numbered by it)
  ADD COLUMN clearing_count integer NOT NULL DEFAULT 0,
  -- cleared without an authorization
  ADD COLUMN force_post boolean NOT NULL DEFAULT false,
  -- a refund: the payment it gives money back for
  ADD COLUMN original_transaction_id uuid REFERENCES issuing_transactions (id);

UPDATE issuing_transactions SET held_amount = amount WHERE status = 'authorized';
UPDATE issuing_transactions SET held_amount = 0 WHERE status IN ('settled', 'reversed', 'expired') AND hold_id IS NOT NULL;
UPDATE issuing_transactions SET clearing_count = 1 WHERE status = 'settled' AND type = 'card_payment';

-- the refunds of a payment (a refund is refused beyond what is left of it)
CREATE INDEX issuing_transactions_original ON issuing_transactions (original_transaction_id)
  WHERE original_transaction_id IS NOT NULL;
