-- Who sent an incoming transfer (docs/compliance.md, Monitoring: crypto from a listed address). The chain
-- rail reports the sending address with each transfer it sees; a crypto order's deposit keeps it, so the
-- compliance officer can see who paid, and a payment from an address OFAC lists is an alert. Null where
-- no sender is known: a transfer recorded before this column, or one the platform itself sent.
ALTER TABLE chain_transfers ADD COLUMN sender text;
ALTER TABLE evm_transfers ADD COLUMN sender text;
ALTER TABLE crypto_deposits ADD COLUMN sender text;
