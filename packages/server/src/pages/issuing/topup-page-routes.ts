// /hosted/issuing/topups/{paymentToken}: the hosted topup page, addressed by an unguessable token (the
// customer's browser carries no API token). Paying by card posts here; a 3D Secure challenge goes to the
// card network's ACS page, which returns the browser here.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { CardInput, CardTopups } from '../../issuing/topups/card-topups.ts';
import type { TopupsService } from '../../issuing/topups/topups-service.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { challengeRedirectPage, page, sendPage } from '../html.ts';
import { topupPage } from './topup-page.ts';

export async function registerTopupPageRoutes(
  app: FastifyInstance,
  deps: { topups: TopupsService; cardTopups: CardTopups },
): Promise<void> {
  const notFound = (reply: FastifyReply) =>
    sendPage(reply.code(404), page('Not found', '<h1>Not found</h1><p>No such topup.</p>'));

  app.get<{ Params: { token: string } }>('/hosted/issuing/topups/:token', async (request, reply) => {
    const topup = await deps.topups.byPaymentToken(request.params.token);
    if (!topup) return notFound(reply);
    const declined = topup.status === 'pending' && topup.lastDecline;
    return sendPage(
      reply,
      topupPage(
        topup,
        declined
          ? { text: 'The card payment did not go through. Try another card.', isError: true }
          : undefined,
      ),
    );
  });

  app.post<{ Params: { token: string }; Body: CardInput }>(
    '/hosted/issuing/topups/:token',
    async (request, reply) => {
      const { token } = request.params;
      if (!(await deps.topups.byPaymentToken(token))) return notFound(reply);
      let result: Awaited<ReturnType<CardTopups['pay']>>;
      try {
        result = await deps.cardTopups.pay(token, request.body ?? {});
      } catch (err) {
        if (!(err instanceof DomainError) || err.status >= 500) throw err;
        const topup = await deps.topups.byPaymentToken(token);
        if (!topup) return notFound(reply);
        return sendPage(
          reply.code(err.status),
          topupPage(topup, { text: err.message, isError: true, field: err.field }),
        );
      }
      if (result.outcome === 'challenge') return sendPage(reply, challengeRedirectPage(result.redirect));
      if (result.outcome === 'declined') {
        const topup = await deps.topups.byPaymentToken(token);
        if (!topup) return notFound(reply);
        return sendPage(reply.code(402), topupPage(topup, { text: result.message, isError: true }));
      }
      return reply.redirect(`/hosted/issuing/topups/${token}`, 303);
    },
  );
}
