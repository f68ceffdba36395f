-- Four eyes on risk reviews (docs/risk.md, Reviews): approving a review that lets money out — a held payout,
-- a held crypto refund, a held bank account change — follows the tenant's approval policy like the action
-- itself would, so such an approval can wait as a request for a second person.
ALTER TABLE approval_requests DROP CONSTRAINT approval_requests_action_check;
ALTER TABLE approval_requests ADD CONSTRAINT approval_requests_action_check
  CHECK (action IN ('refund', 'payout', 'bankAccountChange', 'riskReview'));
