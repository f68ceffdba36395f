-- Issuing deliveries whose burst of attempts failed wait for the partner's endpoint to answer again
-- (docs/webhooks.md, Waiting deliveries), unless the partner's setting says to give up as the spec does.
ALTER TABLE partners ADD COLUMN webhook_redeliver_when_back boolean NOT NULL DEFAULT true;

ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_status_check;
ALTER TABLE webhook_deliveries
  ADD CONSTRAINT webhook_deliveries_status_check CHECK (status IN ('pending', 'succeeded', 'failed', 'waiting'));
-- next_attempt_at of a waiting delivery is its next probe; the set is small (only an endpoint's outage)
CREATE INDEX webhook_deliveries_waiting ON webhook_deliveries (next_attempt_at) WHERE status = 'waiting';
