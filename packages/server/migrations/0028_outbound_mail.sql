-- Mail to people, sent by SMTP when TESSERA_SMTP_URL is set. A message is written in the business step's
-- transaction (it is never lost with a rolled-back step, nor sent for one), then sent after the commit
-- and retried at due times on the injected clock. Subject and body hold one-time codes and links: stored
-- encrypted, bound to the message's id.
CREATE TABLE outbound_mail (
  id text PRIMARY KEY,
  recipient text NOT NULL,
  subject_enc text NOT NULL,
  body_enc text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'sent', 'failed')),
  attempt_count integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  -- A wall-clock lease on an attempt in flight: two processes never hand one message to SMTP together.
  leased_until timestamptz,
  -- What the SMTP server answered last (no message content).
  last_error text,
  -- The server's answer when it accepted the message (its queue id).
  smtp_response text,
  sent_at timestamptz,
  created_at timestamptz NOT NULL
);
CREATE INDEX outbound_mail_due ON outbound_mail (next_attempt_at) WHERE status = 'pending';
