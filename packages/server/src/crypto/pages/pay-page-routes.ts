// The hosted crypto payment page (/crypto/pay/{orderId}): the buyer picks a currency and network, gets
// a 60-second quote with a deposit address, amount and QR code and a countdown, then watches the
// confirmations and returns to the store. Plain HTML forms work without JavaScript; a small script only
// counts down and refreshes the page when the order changes.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { renderSVG } from 'uqr';
import type { Clock } from '../../platform/clock/clock.ts';
import type { CapabilityTokens } from '../../platform/crypto/capability-tokens.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { allowFraming } from '../../platform/http/security-headers.ts';
import { isUuid } from '../../platform/ids.ts';
import { formatAmountIn } from '../../platform/money/amount.ts';
import { findNetwork } from '../../platform/money/assets.ts';
import { escapeHtml, noticePage, sendBrandedPage, sendPage } from '../../platform/pages/html.ts';
import { type Lang, languageOf } from '../../platform/pages/i18n.ts';
import { type Messages, messagesFor } from '../../platform/pages/messages.ts';
import { sameOrigin } from '../../platform/pages/same-origin.ts';
import type { Store } from '../../platform/tenants/stores-service.ts';
import type { Order, OrdersService, PaymentOption } from '../orders/orders-service.ts';

const money = (minor: bigint, currency: string) => `${formatAmountIn(minor, currency)} ${currency}`;

/** What changes on the page; the script reloads when it differs from the rendered one. */
function stamp(order: Order): string {
  return [
    order.status,
    order.inReview ? 'in_review' : '',
    ...order.deposits.map((d) => `${d.status}:${d.confirmations}`),
  ].join('|');
}

/** How long the buyer's redirect after a cancel waits for the shop to take the cancel's webhook. */
const CANCEL_WEBHOOK_WAIT_MS = 5_000;

export async function registerPayPageRoutes(
  app: FastifyInstance,
  deps: {
    orders: OrdersService;
    clock: Clock;
    capabilities: CapabilityTokens;
    /** Sends an event's webhook now, waiting at most this long (delivery-engine.ts) */
    deliverBeforeAnswer: (eventId: string, waitMs: number) => Promise<void>;
  },
): Promise<void> {
  const load = async (id: string): Promise<PageView> => {
    if (!isUuid(id)) throw new DomainError('not_found', 'order not found');
    const view = await deps.orders.forBuyer(id);
    return { ...view, cancelToken: deps.capabilities.issue('crypto-pay-cancel', view.order.id) };
  };

  app.get<{ Params: { orderId: string } }>('/crypto/pay/:orderId', async (request, reply) => {
    const lang = languageOf(request, reply);
    const view = await load(request.params.orderId).catch(() => undefined);
    if (!view) return notFoundPage(reply, lang);
    return render(reply, view, deps.clock.now(), lang);
  });

  app.get<{ Params: { orderId: string } }>('/crypto/pay/:orderId/status', async (request, reply) => {
    const view = await load(request.params.orderId).catch(() => undefined);
    if (!view) return reply.code(404).send({ error: 'not found' });
    return reply.send({ status: view.order.status, stamp: stamp(view.order) });
  });

  app.post<{ Params: { orderId: string }; Body: { option?: string } }>(
    '/crypto/pay/:orderId/choose',
    async (request, reply) => {
      const lang = languageOf(request, reply);
      const view = await load(request.params.orderId).catch(() => undefined);
      if (!view) return notFoundPage(reply, lang);
      const [asset = '', network = ''] = String(request.body?.option ?? '').split(':');
      // Sent without a choice (a browser that skips `required`): say what is missing, in the page's language.
      if (!asset) {
        const m = messagesFor(lang);
        return render(reply.code(400), view, deps.clock.now(), lang, m.chooseFirst);
      }
      try {
        await deps.orders.choose(view.order.id, { asset, network });
      } catch (err) {
        if (!(err instanceof DomainError) || err.status >= 500) throw err;
        return render(reply.code(err.status), await load(view.order.id), deps.clock.now(), lang, err.message);
      }
      return reply.redirect(`/crypto/pay/${view.order.id}?lang=${lang}`, 303);
    },
  );

  // Cancelling is taken only from the pay page itself: a browser on this origin, echoing the token the
  // page was rendered with for this order. Another site that knows a buyer's pay link cannot cancel.
  app.post<{ Params: { orderId: string }; Body: { token?: string } }>(
    '/crypto/pay/:orderId/cancel',
    async (request, reply) => {
      const lang = languageOf(request, reply);
      const view = await load(request.params.orderId).catch(() => undefined);
      if (!view) return notFoundPage(reply, lang);
      const token = request.body?.token;
      if (
        !sameOrigin(request) ||
        typeof token !== 'string' ||
        deps.capabilities.open('crypto-pay-cancel', token) !== view.order.id
      ) {
        const m = messagesFor(lang);
        return render(reply.code(403), view, deps.clock.now(), lang, m.formRefused);
      }
      try {
        const { order, eventId } = await deps.orders.cancelByBuyer(view.order.id);
        // The shop hears of the cancel before the buyer lands on it (as it hears of a payment before
        // the buyer returns): a shop that serves one request at a time could not take the webhook
        // while showing the buyer its page, and a page waiting for it would wait for itself.
        if (eventId) await deps.deliverBeforeAnswer(eventId, CANCEL_WEBHOOK_WAIT_MS);
        return reply.redirect(order.cancelUrl ?? order.returnUrl, 303);
      } catch (err) {
        if (!(err instanceof DomainError) || err.status >= 500) throw err;
        return render(reply.code(err.status), await load(view.order.id), deps.clock.now(), lang, err.message);
      }
    },
  );
}

function notFoundPage(reply: FastifyReply, lang: Lang): FastifyReply {
  const m = messagesFor(lang);
  return sendPage(reply.code(404), noticePage(m.paymentNotFound, m.paymentLinkInvalid, lang));
}

/** What the page shows, and the token its cancel form echoes (bound to this order). */
interface PageView {
  order: Order;
  store: Store;
  option: PaymentOption | null;
  cancelToken: string;
}

function render(reply: FastifyReply, view: PageView, now: Date, lang: Lang, error?: string): FastifyReply {
  const { order, store, option, cancelToken } = view;
  const m = messagesFor(lang);
  const parts = [
    `<h1>${escapeHtml(m.payStore(store.name))}</h1>`,
    `<p>${escapeHtml(m.orderTotal)} <strong data-field="reference">${escapeHtml(order.reference)}</strong>: <strong data-field="total">${escapeHtml(money(order.total, order.currency))}</strong></p>`,
    error ? `<p class="notice error" role="alert">${escapeHtml(error)}</p>` : '',
    body(order, store, option, cancelToken, now, m, lang),
  ];
  // page.js reloads the page when the order's stamp changes, while anything may still happen to it.
  const watch = ['pending', 'paid'].includes(order.status)
    ? `<div hidden data-watch-stamp="${escapeHtml(stamp(order))}"></div>`
    : '';
  return sendBrandedPage(
    allowFraming(reply, store.frameAncestors),
    m.payStore(store.name),
    parts.join('\n') + watch,
    { name: store.name, ...store.brand },
    lang,
  );
}

function body(
  order: Order,
  store: Store,
  option: PaymentOption | null,
  cancelToken: string,
  now: Date,
  m: Messages,
  lang: Lang,
): string {
  const back = (label: string, url: string) =>
    `<p><a id="return" href="${escapeHtml(url)}">${escapeHtml(label)}</a></p>`;
  switch (order.status) {
    case 'paid':
    case 'refund_proposed':
    case 'refund_processing':
    case 'refund_completed':
      return [
        `<h2 data-status="paid">${escapeHtml(m.paymentReceived)}</h2>`,
        `<p>${escapeHtml(m.receivedConfirmed(money(order.amounts.paid, order.currency)))}</p>`,
        order.amounts.over > 0n
          ? `<p class="notice">${escapeHtml(m.paidMore(money(order.amounts.over, order.currency)))}</p>`
          : '',
        back(m.returnTo(store.name), order.returnUrl),
      ].join('\n');
    case 'expired':
    case 'canceled': {
      // What arrived in time and what arrived after the order ended are told apart; both are kept for
      // the buyer (the store can refund them), nothing is lost.
      const confirmedValue = (late: boolean) =>
        order.deposits
          .filter((d) => d.status === 'confirmed' && d.late === late)
          .reduce((sum, d) => sum + d.fiatValue, 0n);
      const [inTime, late] = [confirmedValue(false), confirmedValue(true)];
      return [
        `<h2 data-status="${order.status}">${escapeHtml(order.status === 'expired' ? m.paymentExpired : m.paymentCanceled)}</h2>`,
        inTime > 0n
          ? `<p class="notice">${escapeHtml(m.arrivedInTime(money(inTime, order.currency), money(order.total, order.currency), store.name))}</p>`
          : '',
        late > 0n
          ? `<p class="notice">${escapeHtml(m.arrivedLate(money(late, order.currency), store.name))}</p>`
          : '',
        back(m.returnTo(store.name), order.cancelUrl ?? order.returnUrl),
      ].join('\n');
    }
    case 'pending':
      break;
  }
  if (order.paymentLocked) return progress(order, option, now, m);
  if (now >= order.expiresAt) return `<h2 data-status="expired">${escapeHtml(m.paymentExpired)}</h2>`;
  // Held by the store's checks (a risk rule's review): no address until they are done; the page refreshes.
  if (order.inReview)
    return `<h2 data-status="in_review">${escapeHtml(m.orderBeingChecked)}</h2>\n<p>${escapeHtml(m.orderBeingCheckedDetail(store.name))}</p>`;
  // The picker appears twice on one page (to requote, and to change currency): its ids are prefixed.
  const picker = (prefix: string) => {
    const choices = store.currencies
      .map((c, i) => {
        const id = `${prefix}-option-${i}`;
        // The chosen one, or the only one there is.
        const chosen = option
          ? option.asset === c.currency && option.network === c.network
          : store.currencies.length === 1;
        const checked = chosen ? ' checked' : '';
        const network = findNetwork(c.currency, c.network)?.name ?? c.network;
        return `<label for="${id}"><input type="radio" id="${id}" name="option" value="${escapeHtml(`${c.currency}:${c.network}`)}" required${checked}> ${escapeHtml(m.assetOn(c.currency, network))}</label>`;
      })
      .join('\n');
    return `<form method="post" action="/crypto/pay/${order.id}/choose?lang=${lang}">
<fieldset><legend>${escapeHtml(m.payWith)}</legend>
${choices}
</fieldset>
<button type="submit">${escapeHtml(option ? m.newQuote : m.showAddress)}</button>
</form>`;
  };
  const cancel = `<form method="post" action="/crypto/pay/${order.id}/cancel?lang=${lang}"><input type="hidden" name="token" value="${escapeHtml(cancelToken)}"><button type="submit" id="cancel" class="secondary">${escapeHtml(m.cancelAndReturnTo(store.name))}</button></form>`;
  const secondsLeft = option ? Math.floor((option.quote.expiresAt.getTime() - now.getTime()) / 1000) : 0;
  if (!option || secondsLeft <= 0) {
    return [
      option ? `<p class="notice" role="status">${escapeHtml(m.quoteExpired)}</p>` : '',
      picker('pick'),
      cancel,
    ].join('\n');
  }
  return `${sendSection(option, m.sendExactly, `${escapeHtml(m.guaranteedFor)} <strong id="countdown" data-seconds="${secondsLeft}" data-expired="${escapeHtml(m.expired)}">${secondsLeft} s</strong>.`, m)}
<div id="requote" hidden>${picker('requote')}</div>
<details><summary>${escapeHtml(m.anotherCurrency)}</summary>${picker('other')}</details>
${cancel}`;
}

/** Where and what to send: the address, the exact amount, a QR code of both. */
function sendSection(option: PaymentOption, heading: string, guarantee: string, m: Messages): string {
  const amount = formatAmountIn(option.cryptoDue, option.asset);
  const uri = option.network === 'BTC' ? `bitcoin:${option.address}?amount=${amount}` : option.address;
  return `<section aria-labelledby="send">
<h2 id="send">${escapeHtml(heading)} <span data-field="crypto-amount">${escapeHtml(amount)}</span> ${escapeHtml(option.asset)}</h2>
<p>${escapeHtml(m.onNetworkTo(findNetwork(option.asset, option.network)?.name ?? option.network))}</p>
<p><code data-field="address">${escapeHtml(option.address)}</code></p>
<figure class="qr" role="img" aria-label="${escapeHtml(m.qrLabel)}">${renderSVG(uri)}</figure>
<p>${guarantee}</p>
</section>`;
}

function progress(order: Order, option: PaymentOption | null, now: Date, m: Messages): string {
  const rows = order.deposits
    .map(
      (d) =>
        `<tr><td>${escapeHtml(formatAmountIn(d.amount, d.asset))} ${escapeHtml(d.asset)}</td><td data-field="confirmations">${escapeHtml(m.confirmationsOf(d.confirmations, d.confirmationsRequired))}</td><td>${escapeHtml(d.status === 'confirmed' ? m.confirmed : m.confirming)}</td></tr>`,
    )
    .join('');
  return `<h2 data-status="confirming">${escapeHtml(m.paymentDetected)}</h2>
<p role="status">${escapeHtml(m.waitingConfirmations)}</p>
<table><thead><tr><th scope="col">${escapeHtml(m.amount)}</th><th scope="col">${escapeHtml(m.confirmations)}</th><th scope="col">${escapeHtml(m.transferState)}</th></tr></thead><tbody>${rows}</tbody></table>
${order.amounts.due > 0n ? stillDue(order, option, now, m) : ''}`;
}

/** After a partial payment: what is left, where to send it, and how long is left to do so. */
function stillDue(order: Order, option: PaymentOption | null, now: Date, m: Messages): string {
  const secondsLeft = Math.max(0, Math.floor((order.expiresAt.getTime() - now.getTime()) / 1000));
  const due = `<p class="notice" role="status">${escapeHtml(m.stillDue)} <span data-field="amount-due">${escapeHtml(money(order.amounts.due, order.currency))}</span></p>`;
  if (!option || secondsLeft === 0) return due;
  return `${due}
${sendSection(option, m.sendTheRest, `${escapeHtml(m.waitsFor)} <strong id="countdown" data-seconds="${secondsLeft}" data-expired="${escapeHtml(m.expired)}">${secondsLeft} s</strong> ${escapeHtml(m.waitsForAfter)}`, m)}`;
}
