-- Columns of 0010 that nothing reads: the transaction's route (the card network knows it), the
-- issuer's own reference (on-us records are found by the network reference) and what the network
-- answered (a lost answer is marked by its reconciliation due time).
ALTER TABLE payments_transactions DROP COLUMN route;
ALTER TABLE card_network_authorizations DROP COLUMN issuer_reference;
ALTER TABLE card_network_authorizations DROP COLUMN answered;
