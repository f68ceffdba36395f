-- Risk rules on issuing topups (docs/risk.md, Decision point `issuing.topup`): a topup a rule challenges
-- asks the cardholder for 3-D Secure when it is paid by card on the hosted page.
ALTER TABLE issuing_topups ADD COLUMN risk_challenge boolean NOT NULL DEFAULT false;
