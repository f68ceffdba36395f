-- Dispute monitoring (docs/risk.md, Monitoring): a merchant's disputes of the month are read by when they
-- were received.
CREATE INDEX payments_disputes_created ON payments_disputes (created_at);
