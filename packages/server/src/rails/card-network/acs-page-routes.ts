// The card network simulator's hosted ACS (3D Secure access control server) page. The merchant's page
// posts `creq` to /acs/challenge (3DS2 browser flow); the cardholder approves or fails; the browser then
// returns to the requester's return URL. A card issued by this platform is challenged in the issuing
// API instead (on-us): this page waits for the cardholder's decision there and then returns.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { allowFraming } from '../../platform/http/security-headers.ts';
import { escapeHtml, noticePage, page } from '../../platform/pages/html.ts';
import { type Lang, languageOf } from '../../platform/pages/i18n.ts';
import { messagesFor } from '../../platform/pages/messages.ts';
import type { CardNetworkSandbox, ChallengeView } from '../sandbox.ts';

type CreqBody = { creq?: string; outcome?: string } | undefined;

export async function registerAcsPageRoutes(
  app: FastifyInstance,
  deps: { network: CardNetworkSandbox },
): Promise<void> {
  const show = async (creq: string | undefined, request: FastifyRequest, reply: FastifyReply) => {
    framable(reply);
    const lang = languageOf(request, reply);
    const challenge = creq ? await deps.network.challenge(creq) : undefined;
    if (!challenge) return notFound(reply, lang);
    if (challenge.status !== 'pending') return backOrDone(reply, challenge.returnUrl, lang);
    return reply.type('text/html').send(render(challenge, lang));
  };

  app.get<{ Querystring: { creq?: string } }>('/acs/challenge', (request, reply) =>
    show(request.query.creq, request, reply),
  );
  app.post<{ Body: CreqBody }>('/acs/challenge', (request, reply) =>
    show(request.body?.creq, request, reply),
  );

  app.post<{ Body: CreqBody }>('/acs/challenge/decide', async (request, reply) => {
    const creq = String(request.body?.creq ?? '');
    const outcome = request.body?.outcome === 'approve' ? 'approved' : 'failed';
    framable(reply);
    const lang = languageOf(request, reply);
    const challenge = await deps.network.challenge(creq);
    if (!challenge) return notFound(reply, lang);
    try {
      return backOrDone(reply, await deps.network.decideChallenge(creq, outcome), lang);
    } catch (err) {
      if (!(err instanceof DomainError) || err.status >= 500) throw err;
      return reply
        .code(err.status)
        .type('text/html')
        .send(
          page(
            messagesFor(lang).authenticationTitle,
            `<h1>${escapeHtml(messagesFor(lang).authenticationTitle)}</h1><p class="notice error" role="alert">${escapeHtml(err.message)}</p>`,
            undefined,
            lang,
          ),
        );
    }
  });
}

/**
 * 3-D Secure challenge windows are framed by the merchant's page by design (an embedded checkout shows it
 * in its own frame); the page holds no secret and acts only through its `creq`.
 */
const framable = (reply: FastifyReply) => allowFraming(reply, ['*']);

const notFound = (reply: FastifyReply, lang: Lang) => {
  const m = messagesFor(lang);
  return reply
    .code(404)
    .type('text/html')
    .send(page(m.notFound, `<h1>${escapeHtml(m.noSuchChallenge)}</h1>`, undefined, lang));
};

function render(c: ChallengeView, lang: Lang): string {
  const m = messagesFor(lang);
  const summary = `<p>${escapeHtml(m.acsSummary(`${c.amount} ${c.currency}`, c.merchant, c.last4))}</p>`;
  if (c.decidedBy === 'issuer') {
    // On-us: the cardholder answers in the card issuer's app; this page checks again every few seconds.
    return page(
      m.confirmInApp,
      `<h1>${escapeHtml(m.confirmInAppHeading)}</h1>${summary}
<p class="notice" role="status">${escapeHtml(m.waitingConfirmation)}</p>
<form method="post" action="/acs/challenge?lang=${lang}" data-autosubmit="2000"><input type="hidden" name="creq" value="${escapeHtml(c.creq)}"><button type="submit">${escapeHtml(m.checkAgain)}</button></form>`,
      undefined,
      lang,
    );
  }
  return page(
    m.threeDsTitle,
    `<h1>${escapeHtml(m.threeDsTitle)}</h1>${summary}
<p>${escapeHtml(m.sandboxIssuer)}</p>
<form method="post" action="/acs/challenge/decide?lang=${lang}">
<input type="hidden" name="creq" value="${escapeHtml(c.creq)}">
<button type="submit" name="outcome" value="approve">${escapeHtml(m.approve)}</button>
<button type="submit" name="outcome" value="fail">${escapeHtml(m.failAuthentication)}</button>
</form>`,
    undefined,
    lang,
  );
}

/** Back to the requester; a challenge with no return address (made before it was kept) just says done. */
function backOrDone(reply: FastifyReply, returnUrl: string | null, lang: Lang): FastifyReply {
  if (returnUrl) return reply.redirect(returnUrl, 303);
  const m = messagesFor(lang);
  return reply.type('text/html').send(noticePage(m.done, m.closeWindow, lang, m.authenticationTitle));
}
