// The card network simulator's hosted ACS (3D Secure access control server) page. The merchant's page
// posts `creq` to /acs/challenge (3DS2 browser flow); the cardholder approves or fails; the browser then
// returns to the requester's return URL. A card issued by this platform is challenged in the issuing
// API instead (on-us): this page waits for the cardholder's decision there and then returns.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { allowFraming } from '../../platform/http/security-headers.ts';
import type { CardNetworkSimulator, ChallengeView } from '../../rails/card-network/network-simulator.ts';
import { escapeHtml, page } from '../html.ts';

type CreqBody = { creq?: string; outcome?: string } | undefined;

export async function registerAcsPageRoutes(
  app: FastifyInstance,
  deps: { network: CardNetworkSimulator },
): Promise<void> {
  const show = async (creq: string | undefined, reply: FastifyReply) => {
    framable(reply);
    const challenge = creq ? await deps.network.challenge(creq) : undefined;
    if (!challenge)
      return reply.code(404).type('text/html').send(page('Not found', '<h1>No such challenge</h1>'));
    if (challenge.status !== 'pending') return backOrDone(reply, challenge.returnUrl);
    return reply.type('text/html').send(render(challenge));
  };

  app.get<{ Querystring: { creq?: string } }>('/acs/challenge', (request, reply) =>
    show(request.query.creq, reply),
  );
  app.post<{ Body: CreqBody }>('/acs/challenge', (request, reply) => show(request.body?.creq, reply));

  app.post<{ Body: CreqBody }>('/acs/challenge/decide', async (request, reply) => {
    const creq = String(request.body?.creq ?? '');
    const outcome = request.body?.outcome === 'approve' ? 'approved' : 'failed';
    framable(reply);
    const challenge = await deps.network.challenge(creq);
    if (!challenge)
      return reply.code(404).type('text/html').send(page('Not found', '<h1>No such challenge</h1>'));
    try {
      return backOrDone(reply, await deps.network.decideChallenge(creq, outcome));
    } catch (err) {
      if (!(err instanceof DomainError) || err.status >= 500) throw err;
      return reply
        .code(err.status)
        .type('text/html')
        .send(
          page(
            'Authentication',
            `<h1>Authentication</h1><p class="notice error" role="alert">${escapeHtml(err.message)}</p>`,
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

function render(c: ChallengeView): string {
  const summary = `<p>Pay <strong>${escapeHtml(`${c.amount} ${c.currency}`)}</strong> to <strong>${escapeHtml(c.merchant)}</strong> with the card ending in <strong>${escapeHtml(c.last4)}</strong>.</p>`;
  if (c.decidedBy === 'issuer') {
    // On-us: the cardholder answers in the card issuer's app; this page checks again every few seconds.
    return page(
      'Confirm in your card app',
      `<h1>Confirm this payment in your card app</h1>${summary}
<p class="notice" role="status">Waiting for your confirmation…</p>
<form method="post" action="/acs/challenge"><input type="hidden" name="creq" value="${escapeHtml(c.creq)}"><button type="submit">Check again</button></form>
<script>setTimeout(function () { document.forms[0].submit(); }, 2000);</script>`,
    );
  }
  return page(
    '3D Secure authentication',
    `<h1>3D Secure authentication</h1>${summary}
<p>Sandbox issuer: choose how the cardholder answers.</p>
<form method="post" action="/acs/challenge/decide">
<input type="hidden" name="creq" value="${escapeHtml(c.creq)}">
<button type="submit" name="outcome" value="approve">Approve</button>
<button type="submit" name="outcome" value="fail">Fail authentication</button>
</form>`,
  );
}

/** Back to the requester; a challenge with no return address (made before it was kept) just says done. */
function backOrDone(reply: FastifyReply, returnUrl: string | null): FastifyReply {
  if (returnUrl) return reply.redirect(returnUrl, 303);
  return reply
    .type('text/html')
    .send(page('Authentication', '<h1>Done</h1><p>You may close this window.</p>'));
}
