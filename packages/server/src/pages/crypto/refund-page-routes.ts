// The buyer's refund decision page (/crypto/refunds/{token}), linked from the proposal email: accept
// (giving the address to send the refund to) or reject. The token in the link is the capability.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Refund, RefundsService } from '../../crypto/refunds/refunds-service.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { formatAmountIn } from '../../platform/money/amount.ts';
import { findNetwork } from '../../platform/money/assets.ts';
import { escapeHtml, page, sendBrandedPage } from '../html.ts';

export async function registerRefundPageRoutes(
  app: FastifyInstance,
  deps: { refunds: RefundsService },
): Promise<void> {
  const find = (token: string) => deps.refunds.byToken(token).catch(() => undefined);

  app.get<{ Params: { token: string } }>('/crypto/refunds/:token', async (request, reply) => {
    const refund = await find(request.params.token);
    return refund ? render(reply, refund, request.params.token) : notFound(reply);
  });

  for (const decision of ['accept', 'reject'] as const) {
    app.post<{ Params: { token: string }; Body: { address?: string } }>(
      `/crypto/refunds/:token/${decision}`,
      async (request, reply) => {
        const { token } = request.params;
        if (!(await find(token))) return notFound(reply);
        try {
          const refund =
            decision === 'accept'
              ? await deps.refunds.accept({ token }, String(request.body?.address ?? '').trim())
              : await deps.refunds.reject({ token });
          return render(reply, refund, token);
        } catch (err) {
          if (!(err instanceof DomainError) || err.status >= 500) throw err;
          const refund = await find(token);
          return refund ? render(reply.code(err.status), refund, token, err.message) : notFound(reply);
        }
      },
    );
  }
}

function notFound(reply: FastifyReply): FastifyReply {
  return reply
    .code(404)
    .type('text/html; charset=utf-8')
    .send(page('Refund not found', '<h1>Refund not found</h1><p>This refund link is not valid.</p>'));
}

function render(reply: FastifyReply, refund: Refund, token: string, error?: string): FastifyReply {
  const amount = `${formatAmountIn(refund.amount, refund.currency)} ${refund.currency}`;
  const crypto = `${formatAmountIn(refund.cryptoAmount, refund.asset)} ${refund.asset}`;
  const network = findNetwork(refund.asset, refund.network)?.name ?? refund.network;
  const outcome: Record<Refund['status'], string> = {
    proposed: '',
    accepted: `You accepted the refund. ${crypto} is on its way to ${refund.refundAddress ?? ''}.`,
    complete: `The refund of ${crypto} was sent to ${refund.refundAddress ?? ''} and is confirmed.`,
    rejected: 'You rejected this refund.',
    expired: 'This refund proposal expired.',
  };
  const decide =
    refund.status === 'proposed'
      ? `<form method="post" action="/crypto/refunds/${escapeHtml(token)}/accept">
<label for="address">Your ${escapeHtml(refund.asset)} address on ${escapeHtml(network)}</label>
<input id="address" name="address" required autocomplete="off">
<button type="submit">Accept the refund</button>
</form>
<form method="post" action="/crypto/refunds/${escapeHtml(token)}/reject"><button type="submit">Reject the refund</button></form>
<p>This proposal expires on ${escapeHtml(refund.expiresAt.toISOString().slice(0, 10))}.</p>`
      : `<p class="notice" role="status" data-status="${refund.status}">${escapeHtml(outcome[refund.status])}</p>`;
  return sendBrandedPage(
    reply,
    'Refund proposal',
    `<h1>Refund from ${escapeHtml(refund.storeName)}</h1>
<p>For order <strong>${escapeHtml(refund.orderReference)}</strong>: <strong data-field="amount">${escapeHtml(amount)}</strong>, sent back as ${escapeHtml(crypto)} on ${escapeHtml(network)}.</p>
${refund.reason ? `<p>Reason: ${escapeHtml(refund.reason)}</p>` : ''}
${error ? `<p class="notice error" role="alert">${escapeHtml(error)}</p>` : ''}
${decide}`,
    refund.storeBrand,
  );
}
