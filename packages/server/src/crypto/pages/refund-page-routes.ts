// The buyer's refund decision page (/crypto/refunds/{token}), linked from the proposal email: accept
// (giving the address to send the refund to) or reject. The token in the link is the capability.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { formatAmountIn } from '../../platform/money/amount.ts';
import { findNetwork } from '../../platform/money/assets.ts';
import { escapeHtml, noticePage, sendBrandedPage, sendPage } from '../../platform/pages/html.ts';
import { type Lang, languageOf } from '../../platform/pages/i18n.ts';
import { messagesFor } from '../../platform/pages/messages.ts';
import type { Refund, RefundsService } from '../refunds/refunds-service.ts';

export async function registerRefundPageRoutes(
  app: FastifyInstance,
  deps: { refunds: RefundsService },
): Promise<void> {
  const find = (token: string) => deps.refunds.byToken(token).catch(() => undefined);

  app.get<{ Params: { token: string } }>('/crypto/refunds/:token', async (request, reply) => {
    const lang = languageOf(request, reply);
    const refund = await find(request.params.token);
    return refund ? render(reply, refund, request.params.token, lang) : notFound(reply, lang);
  });

  for (const decision of ['accept', 'reject'] as const) {
    app.post<{ Params: { token: string }; Body: { address?: string } }>(
      `/crypto/refunds/:token/${decision}`,
      async (request, reply) => {
        const { token } = request.params;
        const lang = languageOf(request, reply);
        if (!(await find(token))) return notFound(reply, lang);
        try {
          const refund =
            decision === 'accept'
              ? await deps.refunds.accept({ token }, String(request.body?.address ?? '').trim())
              : await deps.refunds.reject({ token });
          return render(reply, refund, token, lang);
        } catch (err) {
          if (!(err instanceof DomainError) || err.status >= 500) throw err;
          const refund = await find(token);
          return refund
            ? render(reply.code(err.status), refund, token, lang, err.message)
            : notFound(reply, lang);
        }
      },
    );
  }
}

function notFound(reply: FastifyReply, lang: Lang): FastifyReply {
  const m = messagesFor(lang);
  return sendPage(reply.code(404), noticePage(m.refundNotFound, m.refundLinkInvalid, lang));
}

function render(
  reply: FastifyReply,
  refund: Refund,
  token: string,
  lang: Lang,
  error?: string,
): FastifyReply {
  const m = messagesFor(lang);
  const amount = `${formatAmountIn(refund.amount, refund.currency)} ${refund.currency}`;
  const crypto = `${formatAmountIn(refund.cryptoAmount, refund.asset)} ${refund.asset}`;
  const network = findNetwork(refund.asset, refund.network)?.name ?? refund.network;
  const outcome: Record<Refund['status'], string> = {
    proposed: '',
    accepted: m.refundAccepted(crypto, refund.refundAddress ?? ''),
    complete: m.refundComplete(crypto, refund.refundAddress ?? ''),
    rejected: m.refundRejected,
    expired: m.refundExpired,
  };
  // Held by the checks (a risk rule's review): the buyer decides once they are done.
  const decide =
    refund.status === 'proposed' && refund.inReview
      ? `<p class="notice" role="status" data-status="in_review">${escapeHtml(m.refundBeingChecked(refund.storeName))}</p>`
      : refund.status === 'proposed'
        ? `<form method="post" action="/crypto/refunds/${escapeHtml(token)}/accept?lang=${lang}">
<label for="address">${escapeHtml(m.yourAddress(refund.asset, network))}</label>
<input id="address" name="address" required autocomplete="off">
<button type="submit">${escapeHtml(m.acceptRefund)}</button>
</form>
<form method="post" action="/crypto/refunds/${escapeHtml(token)}/reject?lang=${lang}"><button type="submit">${escapeHtml(m.rejectRefund)}</button></form>
<p>${escapeHtml(m.proposalExpires(refund.expiresAt.toISOString().slice(0, 10)))}</p>`
        : `<p class="notice" role="status" data-status="${refund.status}">${escapeHtml(outcome[refund.status])}</p>`;
  return sendBrandedPage(
    reply,
    m.refundProposal,
    `<h1>${escapeHtml(m.refundFrom(refund.storeName))}</h1>
<p>${m.refundFor(
      `<strong>${escapeHtml(refund.orderReference)}</strong>`,
      `<strong data-field="amount">${escapeHtml(amount)}</strong>`,
      escapeHtml(crypto),
      escapeHtml(network),
    )}</p>
${refund.reason ? `<p>${escapeHtml(m.reason(refund.reason))}</p>` : ''}
${error ? `<p class="notice error" role="alert">${escapeHtml(error)}</p>` : ''}
${decide}`,
    refund.storeBrand,
    lang,
  );
}
