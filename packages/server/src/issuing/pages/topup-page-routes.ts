// /hosted/issuing/topups/{paymentToken}: the hosted topup page, addressed by an unguessable token (the
// customer's browser carries no API token). Paying by card posts here; a 3D Secure challenge goes to the
// card network's ACS page, which returns the browser here.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Clock } from '../../platform/clock/clock.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { challengeRedirectPage, noticePage, sendPage } from '../../platform/pages/html.ts';
import { type Lang, languageOf } from '../../platform/pages/i18n.ts';
import { messagesFor } from '../../platform/pages/messages.ts';
import type { CardTopups } from '../topups/card-topups.ts';
import type { TopupsService } from '../topups/topups-service.ts';
import { type CardInput, readCard } from './topup-card-form.ts';
import { topupPage } from './topup-page.ts';

export async function registerTopupPageRoutes(
  app: FastifyInstance,
  deps: { topups: TopupsService; cardTopups: CardTopups; clock: Clock },
): Promise<void> {
  const notFound = (reply: FastifyReply, lang: Lang) =>
    sendPage(reply.code(404), noticePage(messagesFor(lang).notFound, messagesFor(lang).noSuchTopup, lang));

  app.get<{ Params: { token: string } }>('/hosted/issuing/topups/:token', async (request, reply) => {
    const lang = languageOf(request, reply);
    const topup = await deps.topups.byPaymentToken(request.params.token);
    if (!topup) return notFound(reply, lang);
    const declined = topup.status === 'pending' && topup.lastDecline;
    const notice = declined ? { text: messagesFor(lang).cardDidNotGoThrough, isError: true } : undefined;
    return sendPage(reply, topupPage(topup, notice, lang));
  });

  app.post<{ Params: { token: string }; Body: CardInput }>(
    '/hosted/issuing/topups/:token',
    async (request, reply) => {
      const { token } = request.params;
      const lang = languageOf(request, reply);
      const m = messagesFor(lang);
      if (!(await deps.topups.byPaymentToken(token))) return notFound(reply, lang);
      let result: Awaited<ReturnType<CardTopups['pay']>>;
      try {
        result = await deps.cardTopups.pay(token, readCard(request.body ?? {}, deps.clock.now()));
      } catch (err) {
        if (!(err instanceof DomainError) || err.status >= 500) throw err;
        const topup = await deps.topups.byPaymentToken(token);
        if (!topup) return notFound(reply, lang);
        const text = lang === 'en' ? err.message : m.invalid(err.message);
        return sendPage(
          reply.code(err.status),
          topupPage(topup, { text, isError: true, field: err.field }, lang),
        );
      }
      if (result.outcome === 'challenge')
        return sendPage(reply, challengeRedirectPage(result.redirect, lang));
      if (result.outcome === 'declined') {
        const topup = await deps.topups.byPaymentToken(token);
        if (!topup) return notFound(reply, lang);
        const text = lang === 'en' ? result.message : m.declined(result.message);
        return sendPage(reply.code(402), topupPage(topup, { text, isError: true }, lang));
      }
      return reply.redirect(`/hosted/issuing/topups/${token}?lang=${lang}`, 303);
    },
  );
}
