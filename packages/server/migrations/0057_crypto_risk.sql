-- Risk rules on crypto orders and refunds (docs/risk.md, Decision points `crypto.order`, `crypto.refund`): an order a rule sends to review
-- is written held; the pay page shows no deposit address until a person approves it.
ALTER TABLE crypto_orders ADD COLUMN in_review boolean NOT NULL DEFAULT false;
-- A refund proposal a rule sends to review is written held: the buyer cannot accept or reject it until a
-- person approves it (refused, it is rejected).
ALTER TABLE crypto_refunds ADD COLUMN in_review boolean NOT NULL DEFAULT false;
