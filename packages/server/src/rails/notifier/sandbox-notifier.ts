// The notifier's simulator: messages are stored, not sent; GET /sandbox/messages shows them.
import type { Clock } from '../../platform/clock/clock.ts';
import type { Executor } from '../../platform/db/database.ts';
import { newId } from '../../platform/ids.ts';
import type { Notifier, OutboundMessage } from './port.ts';

export interface StoredMessage extends OutboundMessage {
  id: string;
  createdAt: Date;
}

export class SandboxNotifier implements Notifier {
  constructor(private readonly clock: Clock) {}

  async send(db: Executor, message: OutboundMessage): Promise<void> {
    await db
      .insertInto('sandbox_messages')
      .values({ id: newId('message'), ...message, created_at: this.clock.now() })
      .execute();
  }

  /** Newest first. */
  async list(db: Executor, filter: { recipient?: string; limit: number }): Promise<StoredMessage[]> {
    let query = db.selectFrom('sandbox_messages').selectAll().orderBy('id', 'desc').limit(filter.limit);
    if (filter.recipient) query = query.where('recipient', '=', filter.recipient.toLowerCase());
    const rows = await query.execute();
    return rows.map((r) => ({
      id: r.id,
      channel: r.channel,
      recipient: r.recipient,
      subject: r.subject,
      body: r.body,
      createdAt: r.created_at,
    }));
  }
}
