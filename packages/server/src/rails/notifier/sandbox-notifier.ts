// The notifier's simulator: messages are stored, not sent; GET /sandbox/messages shows them. They hold
// one-time codes, so subject and body are stored encrypted, bound to the message's id.
import type { Clock } from '../../platform/clock/clock.ts';
import type { Encryptor } from '../../platform/crypto/encryption.ts';
import type { Executor } from '../../platform/db/database.ts';
import { newId } from '../../platform/ids.ts';
import type { MessageInbox, StoredMessage } from '../sandbox.ts';
import type { Notifier, OutboundMessage } from './port.ts';

export class SandboxNotifier implements Notifier, MessageInbox {
  constructor(
    private readonly clock: Clock,
    private readonly encryptor: Encryptor,
  ) {}

  async send(db: Executor, message: OutboundMessage): Promise<void> {
    const id = newId('message');
    await db
      .insertInto('sandbox_messages')
      .values({
        id,
        channel: message.channel,
        recipient: message.recipient,
        subject_enc: this.encryptor.encrypt(message.subject, `message:${id}:subject`),
        body_enc: this.encryptor.encrypt(message.body, `message:${id}:body`),
        created_at: this.clock.now(),
      })
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
      subject: this.encryptor.decrypt(r.subject_enc, `message:${r.id}:subject`),
      body: this.encryptor.decrypt(r.body_enc, `message:${r.id}:body`),
      createdAt: r.created_at,
    }));
  }
}
