// GET /sandbox/messages: what the notifier rail's simulator "sent" (one-time codes, notices), newest first.
import { z } from 'zod';
import { standardErrors, timestamp } from '../../admin/http/schemas.ts';
import type { Db } from '../../platform/db/database.ts';
import type { ZodApp } from '../../platform/http/api-scope.ts';
import type { MessageInbox } from '../../rails/sandbox.ts';

export async function registerMessagesRoutes(
  app: ZodApp,
  deps: { db: Db; inbox: MessageInbox },
): Promise<void> {
  app.get(
    '/messages',
    {
      schema: {
        summary: 'Emails and SMS the sandbox sent, newest first',
        tags: ['messages'],
        querystring: z.object({
          recipient: z.string().max(254).optional(),
          limit: z.coerce.number().int().min(1).max(200).default(50),
        }),
        response: {
          200: z.object({
            data: z.array(
              z.object({
                id: z.string(),
                channel: z.enum(['email', 'sms']),
                recipient: z.string(),
                subject: z.string(),
                body: z.string(),
                createdAt: timestamp,
              }),
            ),
          }),
          ...standardErrors,
        },
      },
    },
    async (request) => {
      const messages = await deps.inbox.list(deps.db, {
        limit: request.query.limit,
        ...(request.query.recipient ? { recipient: request.query.recipient } : {}),
      });
      return { data: messages.map((m) => ({ ...m, createdAt: m.createdAt.toISOString() })) };
    },
  );
}
