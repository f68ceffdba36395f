// The notifier's SMTP adapter (TESSERA_SMTP_URL). A message is written to outbound_mail in the caller's
// transaction, so it exists exactly when the business step does; it is handed to the SMTP server after
// the commit, and a failed attempt is due again later on the injected clock (the sweep sends what is due,
// so advancing the sandbox clock runs retries at once). A wall-clock lease keeps two processes from
// handing one message over together. Between the server's "250 accepted" and our record of it a crash
// could still send a message twice; its Message-ID never changes, so receiving systems can tell the two
// copies apart (docs/operations.md, Mail).

import { sql } from 'kysely';
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import { addSeconds, type Clock } from '../../platform/clock/clock.ts';
import type { Encryptor } from '../../platform/crypto/encryption.ts';
import { afterCommit } from '../../platform/db/connection-scope.ts';
import type { Db, Executor } from '../../platform/db/database.ts';
import { newId } from '../../platform/ids.ts';
import { inSpan, SpanKind } from '../../platform/observability/tracing.ts';
import { renderMail } from './mail-templates.ts';
import type { Notifier, OutboundMessage } from './port.ts';

/** Seconds before each retry; after the last, the message is given up as failed. Spans about a day. */
const RETRY_SECONDS = [30, 120, 600, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600];
const LEASE_SECONDS = 120;
/** Messages the retention sweep deletes per run: a backlog is cleared over several runs, never in one long lock */
const PURGE_BATCH = 5_000;
const DUE_BATCH = 50;

export interface SmtpNotifierOptions {
  /** smtp[s]://user:pass@host:port[?tls.rejectUnauthorized=false…] */
  url: string;
  /** The From header: `no-reply@example.com` or `"Example" <no-reply@example.com>` */
  from: string;
  db: Db;
  clock: Clock;
  encryptor: Encryptor;
  logger: Logger;
  /** Days a sent or given-up message is kept, for questions about it (TESSERA_OUTBOUND_MAIL_RETENTION_DAYS) */
  retentionDays: number;
}

/** An SMTP failure nodemailer reports (its code, and the server's reply code when there was one). */
interface SmtpError extends Error {
  code?: string;
  responseCode?: number;
}

/** The server refused this message for good (5xx to its recipient or its content): retrying cannot help. */
function isPermanent(err: SmtpError): boolean {
  return (err.code === 'EENVELOPE' || err.code === 'EMESSAGE') && (err.responseCode ?? 0) >= 500;
}

/** The domain of the From address, for Message-IDs. */
function senderDomain(from: string): string {
  const address = from.match(/<([^>]+)>/)?.[1] ?? from;
  return address.split('@')[1]?.trim() || 'tessera.invalid';
}

export class SmtpNotifier implements Notifier {
  private readonly transporter;
  private readonly domain: string;

  constructor(private readonly options: SmtpNotifierOptions) {
    // Timeouts well inside the lease: an attempt ends (and is recorded) before another may start.
    this.transporter = nodemailer.createTransport({
      url: options.url,
      connectionTimeout: 15_000,
      greetingTimeout: 15_000,
      socketTimeout: 60_000,
    });
    this.domain = senderDomain(options.from);
  }

  /**
   * Checks the connection and the credentials at start; never throws. A failure is not fatal (mail
   * waits in the database until the server is back) but is logged as the error it is.
   */
  async verify(): Promise<void> {
    try {
      await this.transporter.verify();
    } catch (err) {
      this.options.logger.error(
        { code: (err as SmtpError).code },
        `SMTP server not usable: ${(err as Error).message}`,
      );
    }
  }

  async send(db: Executor, message: OutboundMessage): Promise<void> {
    if (message.channel !== 'email') throw new Error('the SMTP notifier sends email only');
    const id = newId('message');
    const now = this.options.clock.now();
    const { encryptor } = this.options;
    await db
      .insertInto('outbound_mail')
      .values({
        id,
        recipient: message.recipient,
        subject_enc: encryptor.encrypt(message.subject, `mail:${id}:subject`),
        body_enc: encryptor.encrypt(message.body, `mail:${id}:body`),
        status: 'pending',
        next_attempt_at: now,
        created_at: now,
      })
      .execute();
    // The first attempt right after the commit; the sweep catches it if this process dies first.
    afterCommit(() => {
      this.attempt(id).catch((err) => this.options.logger.error({ err, mailId: id }, 'mail attempt failed'));
    });
  }

  /** Attempts every message that is due; answers how many were attempted. */
  async deliverDue(): Promise<number> {
    const due = await this.options.db
      .selectFrom('outbound_mail')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', this.options.clock.now())
      .orderBy('next_attempt_at')
      .limit(DUE_BATCH)
      .execute();
    let attempted = 0;
    // Each message sent is a trace of its own (it is sent by a sweep, after the request that wrote it).
    for (const { id } of due) {
      const sent = await inSpan('rail notifier.smtp', { 'tessera.mail_id': id }, () => this.attempt(id), {
        kind: SpanKind.CLIENT,
      });
      if (sent) attempted++;
    }
    return attempted;
  }

  /**
   * Deletes sent and given-up messages older than the retention (their retries end within a day), up to
   * PURGE_BATCH per run: their words hold one-time codes and links, and nothing needs them any more.
   * Answers how many. The status is written out so that the partial index outbound_mail_done serves it.
   */
  async purgeOld(): Promise<number> {
    const { db, clock, retentionDays } = this.options;
    const result = await sql`
      DELETE FROM outbound_mail WHERE id IN (
        SELECT id FROM outbound_mail
        WHERE status IN ('sent', 'failed') AND created_at < ${addSeconds(clock.now(), -retentionDays * 86_400)}
        LIMIT ${PURGE_BATCH})`.execute(db);
    return Number(result.numAffectedRows ?? 0);
  }

  /** When the next retry falls due (for the sandbox clock's advance). */
  async nextDue(): Promise<Date | undefined> {
    const row = await this.options.db
      .selectFrom('outbound_mail')
      .select((eb) => eb.fn.min('next_attempt_at').as('due'))
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return row?.due ?? undefined;
  }

  /** Makes one attempt if the message is due and no other attempt holds it; answers whether it did. */
  async attempt(id: string): Promise<boolean> {
    const { db, clock, encryptor, logger } = this.options;
    const claimed = await db
      .updateTable('outbound_mail')
      .set((eb) => ({
        attempt_count: eb('attempt_count', '+', 1),
        leased_until: addSeconds(new Date(), LEASE_SECONDS),
      }))
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', clock.now())
      .where((eb) => eb.or([eb('leased_until', 'is', null), eb('leased_until', '<', new Date())]))
      .returning(['recipient', 'subject_enc', 'body_enc', 'attempt_count'])
      .executeTakeFirst();
    if (!claimed) return false;
    const mail = renderMail({
      channel: 'email',
      recipient: claimed.recipient,
      subject: encryptor.decrypt(claimed.subject_enc, `mail:${id}:subject`),
      body: encryptor.decrypt(claimed.body_enc, `mail:${id}:body`),
    });
    try {
      const info = await this.transporter.sendMail({
        from: this.options.from,
        to: claimed.recipient,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        messageId: `<${id}@${this.domain}>`,
      });
      await db
        .updateTable('outbound_mail')
        .set({
          status: 'sent',
          sent_at: clock.now(),
          smtp_response: String(info.response ?? '').slice(0, 500),
          leased_until: null,
          last_error: null,
        })
        .where('id', '=', id)
        .execute();
    } catch (caught) {
      const err = caught as SmtpError;
      const retryIn = RETRY_SECONDS[claimed.attempt_count - 1];
      const giveUp = isPermanent(err) || retryIn === undefined;
      await db
        .updateTable('outbound_mail')
        .set({
          status: giveUp ? 'failed' : 'pending',
          next_attempt_at: giveUp ? clock.now() : addSeconds(clock.now(), retryIn),
          leased_until: null,
          last_error: `${err.code ?? 'error'}: ${err.message}`.slice(0, 500),
        })
        .where('id', '=', id)
        .execute();
      // The server's words can quote the recipient: the log gets the codes, the row the whole answer.
      logger.warn(
        {
          mailId: id,
          attempt: claimed.attempt_count,
          code: err.code,
          responseCode: err.responseCode,
          giveUp,
        },
        giveUp ? 'mail given up' : 'mail attempt failed; will retry',
      );
    }
    return true;
  }

  close(): void {
    this.transporter.close();
  }
}
