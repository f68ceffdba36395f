// The notifier rail: email and SMS to end customers (one-time codes, notices). Production points it at
// a mail/SMS provider; the sandbox simulator keeps every message for the operator to read.
import type { Executor } from '../../platform/db/database.ts';

export interface OutboundMessage {
  channel: 'email' | 'sms';
  recipient: string;
  subject: string;
  body: string;
}

export interface Notifier {
  /** Sends, or queues for sending, within the caller's transaction where the rail allows it. */
  send(db: Executor, message: OutboundMessage): Promise<void>;
}
