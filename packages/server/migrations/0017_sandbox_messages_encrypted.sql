-- The sandbox's outbox of emails and SMS holds one-time codes: stored encrypted (AES-256-GCM with the
-- data key, bound to the message id) like every other secret. Messages stored in clear before this
-- version cannot be encrypted by SQL and are dropped (they are sandbox notices).
DELETE FROM sandbox_messages;
ALTER TABLE sandbox_messages RENAME COLUMN subject TO subject_enc;
ALTER TABLE sandbox_messages RENAME COLUMN body TO body_enc;
