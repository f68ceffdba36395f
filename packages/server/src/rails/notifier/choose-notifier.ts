// Which notifier the platform sends through, chosen at boot by configuration. The sandbox inbox keeps every
// message in sandbox mode (GET /sandbox/messages), also when mail goes out by SMTP, so a developer can
// read what was sent; in production it stands in only while no SMTP server is configured.
import type { Executor } from '../../platform/db/database.ts';
import type { Notifier, OutboundMessage } from './port.ts';
import type { SandboxNotifier } from './sandbox-notifier.ts';
import type { SmtpNotifier } from './smtp-notifier.ts';

export function chooseNotifier(
  mode: 'sandbox' | 'production',
  inbox: SandboxNotifier,
  smtp: SmtpNotifier | undefined,
): Notifier {
  if (!smtp) return inbox;
  if (mode === 'production') return smtp;
  return {
    async send(db: Executor, message: OutboundMessage) {
      await inbox.send(db, message);
      if (message.channel === 'email') await smtp.send(db, message);
    },
  };
}
