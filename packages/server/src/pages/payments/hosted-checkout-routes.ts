// The hosted checkout as the real service's SDK and shop plugins use it, on the checkout host:
// - `POST /` with `jsonRequest` and `checksum` shows the card page (nothing is made before the buyer pays);
// - `POST /checkout/embedded` is the same page inside a merchant's page (the iframe the script below
//   opens, allowed by the site's frameAncestors), also offering saved cards with a session token;
// - `POST /checkout/pay` pays, through 3-D Secure when the card asks, and hands the browser back to
//   backUrl with the encrypted result (a form POST of `opensslResult` and `result`), or, embedded, tells
//   the merchant's page by postMessage;
// - `GET /sdk/0.0.9/xmoney.js` defines `XMoneyPaymentForm`, the embedded form's loader.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { StoredCard } from '../../payments/cards/stored-cards-service.ts';
import type { CheckoutRequest } from '../../payments/checkout/checkout-request.ts';
import type { CheckoutSessions } from '../../payments/checkout/checkout-sessions.ts';
import type { CardEntry, CheckoutResult, HostedCheckout } from '../../payments/checkout/hosted-checkout.ts';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { allowFraming } from '../../platform/http/security-headers.ts';
import type { Brand } from '../../platform/tenants/brand.ts';
import type { MerchantsService } from '../../platform/tenants/merchants-service.ts';
import { challengeRedirectPage, escapeHtml, page, sendPage, withBrand } from '../html.ts';
import { EMBEDDED_FORM_SCRIPT } from './embedded-form-script.ts';

type Mode = 'hosted' | 'embedded';

type CheckoutForm = Partial<
  Record<
    | 'jsonRequest'
    | 'checksum'
    | 'mode'
    | 'publicKey'
    | 'sessionToken'
    | 'userId'
    | 'theme'
    | 'savedCard'
    | 'attempt'
    | 'cardHolderName'
    | 'cardNumber'
    | 'cardExpiryDate'
    | 'cardCvv'
    | 'cardHolderCountry'
    | 'cardHolderState',
    string
  >
>;

export interface HostedCheckoutPageDeps {
  checkout: HostedCheckout;
  sessions: CheckoutSessions;
  merchants: MerchantsService;
  frameAncestorsOf: (siteId: number) => Promise<string[]>;
}

export async function registerHostedCheckoutRoutes(
  app: FastifyInstance,
  deps: HostedCheckoutPageDeps,
): Promise<void> {
  app.post<{ Body: CheckoutForm }>('/', (request, reply) =>
    showCardPage(deps, reply, request.body ?? {}, 'hosted'),
  );

  app.post<{ Body: CheckoutForm }>('/checkout/embedded', (request, reply) =>
    showCardPage(deps, reply, request.body ?? {}, 'embedded'),
  );

  app.post<{ Body: CheckoutForm }>('/checkout/pay', async (request, reply) => {
    const form = request.body ?? {};
    const mode: Mode = form.mode === 'embedded' ? 'embedded' : 'hosted';
    let opened: Opened;
    try {
      opened = await openForm(deps, form, mode, reply);
    } catch (err) {
      return refusal(reply, err, mode);
    }
    const { checkoutRequest, savedCards } = opened;
    const savedCard = savedCards.find((c) => String(c.id) === form.savedCard);
    const card: CardEntry = savedCard
      ? { cardId: savedCard.id }
      : {
          cardNumber: form.cardNumber,
          cardExpiryDate: form.cardExpiryDate,
          cardCvv: form.cardCvv,
          cardHolderName: form.cardHolderName,
          cardHolderCountry: form.cardHolderCountry,
          cardHolderState: form.cardHolderState,
        };
    const attempt = /^[\w-]{16,64}$/.test(form.attempt ?? '') ? (form.attempt as string) : undefined;
    if (!attempt)
      return refusal(
        reply,
        new DomainError('validation_failed', 'the payment form is incomplete: reload it', {
          field: 'attempt',
        }),
        mode,
      );
    try {
      const charged = await deps.checkout.pay(checkoutRequest, card, mode, attempt);
      if ('replayed' in charged) {
        return sendCheckoutResult(
          reply,
          deps.checkout,
          charged.replayed.orderId,
          charged.replayed.transactionId,
          mode,
        );
      }
      if (charged.redirect) return sendPage(reply, challengeRedirectPage(charged.redirect));
      return sendCheckoutResult(reply, deps.checkout, charged.order.id, charged.transaction.id, mode);
    } catch (err) {
      if (!(err instanceof DomainError) || err.status >= 500) throw err;
      const message = err.status === 402 ? `${err.message}. Please try another card.` : err.message;
      return sendPage(
        reply.code(err.status === 402 ? 402 : 400),
        cardPage(opened, form, mode, { message, field: err.field }),
      );
    }
  });

  for (const path of ['/sdk/0.0.9/xmoney.js', '/sdk/xmoney.js']) {
    app.get(path, (_request, reply) =>
      reply
        .type('text/javascript; charset=utf-8')
        .header('cache-control', 'public, max-age=300')
        .send(EMBEDDED_FORM_SCRIPT),
    );
  }
}

/** The end of a checkout, also after its 3-D Secure leg: back to backUrl with the result, or to the embedding page. */
export async function sendCheckoutResult(
  reply: FastifyReply,
  checkout: HostedCheckout,
  orderId: number,
  transactionId: number,
  mode: Mode,
): Promise<FastifyReply> {
  const result = await checkout.result(orderId, transactionId);
  if (!result) return sendPage(reply.code(404), page('Payment', '<h1>Payment</h1><p>Unknown payment.</p>'));
  const brand = withBrand(reply, await checkout.brandOf(result.siteId));
  return sendPage(
    reply,
    mode === 'embedded' ? embeddedResultPage(result, brand) : backToShopPage(result, brand),
  );
}

interface Opened {
  checkoutRequest: CheckoutRequest;
  siteName: string;
  brand: Brand;
  savedCards: StoredCard[];
  /** The embedded form's own fields, carried to the pay step */
  carried: CheckoutForm;
}

async function openForm(
  deps: HostedCheckoutPageDeps,
  form: CheckoutForm,
  mode: Mode,
  reply: FastifyReply,
): Promise<Opened> {
  const checkoutRequest = await deps.checkout.open(form);
  // The pages of a site's checkout may be framed by the origins the site lists (the embedded form).
  allowFraming(reply, await deps.frameAncestorsOf(checkoutRequest.siteId));
  const carried: CheckoutForm = {};
  let savedCards: StoredCard[] = [];
  if (mode === 'embedded') {
    if (form.publicKey && deps.merchants.siteOfPublicKey(form.publicKey) !== checkoutRequest.siteId) {
      throw new DomainError('validation_failed', 'publicKey does not name the site of this payment', {
        field: 'publicKey',
      });
    }
    const token = given(form.sessionToken);
    if (token) {
      if (deps.sessions.siteOf(token) !== checkoutRequest.siteId) {
        throw new DomainError('unauthenticated', 'the session token is invalid or expired: get a new one', {
          field: 'sessionToken',
        });
      }
      const userId = Number(given(form.userId));
      savedCards = await deps.checkout.savedCards(
        checkoutRequest,
        Number.isSafeInteger(userId) && userId > 0 ? userId : undefined,
      );
      carried.sessionToken = token;
      if (given(form.userId)) carried.userId = given(form.userId);
    }
    carried.theme = form.theme === 'dark' ? 'dark' : 'light';
  } else {
    savedCards = await deps.checkout.savedCards(checkoutRequest);
  }
  const brand = withBrand(reply, await deps.checkout.brandOf(checkoutRequest.siteId));
  return {
    checkoutRequest,
    siteName: brand.name ?? (await deps.checkout.siteName(checkoutRequest)),
    brand,
    savedCards,
    carried,
  };
}

async function showCardPage(
  deps: HostedCheckoutPageDeps,
  reply: FastifyReply,
  form: CheckoutForm,
  mode: Mode,
) {
  try {
    const opened = await openForm(deps, form, mode, reply);
    return sendPage(reply, cardPage(opened, {}, mode));
  } catch (err) {
    return refusal(reply, err, mode);
  }
}

/** A request that cannot be paid: a clear page, and nothing made. */
function refusal(reply: FastifyReply, err: unknown, mode: Mode): FastifyReply {
  if (!(err instanceof DomainError) || err.status >= 500) throw err;
  const body = `<h1>This payment request cannot be processed</h1>
<p id="error" class="notice error" role="alert">${escapeHtml(err.message)}</p>
<p>Please go back to the shop and try again.</p>${mode === 'embedded' ? notifyParent('error', { code: err.code, message: err.message, field: err.field ?? null }) : ''}`;
  // An embedded refusal is shown inside the merchant's page, which cannot be checked: framing stays allowed.
  if (mode === 'embedded') allowFraming(reply, ['*']);
  return sendPage(reply.code(err.status), page('Payment request refused', body));
}

function cardPage(
  opened: Opened,
  values: CheckoutForm,
  mode: Mode,
  error?: { message: string; field?: string | undefined },
): string {
  const { checkoutRequest: r, siteName, brand, savedCards, carried } = opened;
  const o = r.order.order;
  const amount = `${o.amount} ${o.currency}`;
  const recurring =
    o.type === 'recurring' && o.intervalType && o.intervalValue
      ? `, then every ${o.intervalValue} ${o.intervalType}${o.intervalValue === 1 ? '' : 's'}`
      : '';
  const heading = r.cardVerification
    ? `Save your card with ${siteName}`
    : `Pay ${amount}${recurring} to ${siteName}`;
  const hidden = (name: string, value: string) =>
    `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`;
  const input = (name: keyof CheckoutForm, label: string, attrs: string, prefill = '') => {
    const value = name === 'cardCvv' || name === 'cardNumber' ? '' : (values[name] ?? prefill);
    const invalid = error?.field === name ? ' aria-invalid="true" aria-describedby="error"' : '';
    return `<label for="${name}">${label}</label><input id="${name}" name="${name}" ${attrs} value="${escapeHtml(value)}"${invalid}>`;
  };
  const chosen = values.savedCard ?? (savedCards[0] ? String(savedCards[0].id) : 'new');
  const saved = savedCards.length
    ? `<fieldset><legend>Your saved cards</legend>
${savedCards
  .map(
    (c) =>
      `<label><input type="radio" name="savedCard" value="${c.id}"${chosen === String(c.id) ? ' checked' : ''}> ${escapeHtml(c.brand.toUpperCase())} ending in ${escapeHtml(c.last4)} (${String(c.expiryMonth).padStart(2, '0')}/${c.expiryYear})</label>`,
  )
  .join('\n')}
<label><input type="radio" name="savedCard" value="new"${chosen === 'new' ? ' checked' : ''}> A new card</label>
</fieldset>`
    : '';
  const required = savedCards.length ? '' : ' required';
  const body = `<h1>${escapeHtml(heading)}</h1>
${o.description ? `<p>${escapeHtml(o.description)}</p>` : ''}
${r.cardVerification ? `<p>An authorization of ${escapeHtml(amount)} checks the card and is released at once.</p>` : ''}
${error ? `<p id="error" class="notice error" role="alert">${escapeHtml(error.message)}</p>` : ''}
<form method="post" action="/checkout/pay">
${hidden('jsonRequest', r.jsonRequest)}${hidden('checksum', r.checksum)}${hidden('mode', mode)}${hidden('attempt', randomBytes(18).toString('base64url'))}
${Object.entries(carried)
  .map(([k, v]) => hidden(k, v ?? ''))
  .join('')}
${saved}
<fieldset><legend>${savedCards.length ? 'New card' : 'Card'}</legend>
${input('cardHolderName', 'Name on card', `autocomplete="cc-name"${required}`, [r.order.customer.firstName, r.order.customer.lastName].filter(Boolean).join(' '))}
${input('cardNumber', 'Card number', `inputmode="numeric" autocomplete="cc-number"${required}`)}
${input('cardExpiryDate', 'Expiry (MM/YY)', `autocomplete="cc-exp" placeholder="MM/YY"${required}`)}
${input('cardCvv', 'Security code', `inputmode="numeric" autocomplete="cc-csc"${required}`)}
${input('cardHolderCountry', 'Country (two letters)', `autocomplete="country" maxlength="2"${required}`, r.order.customer.country ?? '')}
${input('cardHolderState', 'State (US and Canada)', 'maxlength="2"')}
</fieldset>
<button type="submit">${escapeHtml(r.cardVerification ? 'Save card' : `Pay ${amount}`)}</button>
</form>
${mode === 'hosted' ? `<p><a id="back" href="${escapeHtml(r.order.backUrl)}">Cancel and return to the shop</a></p>` : notifyParent('ready', null)}`;
  return mode === 'embedded' ? themed(page(heading, body, brand), carried.theme) : page(heading, body, brand);
}

/** The browser goes back to the shop with the result, as a form POST (by script, or by hand without it). */
function backToShopPage(result: CheckoutResult, brand: Brand): string {
  const approved = ['complete-ok', 'in-progress', 'void-ok'].includes(result.transactionStatus);
  return page(
    'Back to the shop',
    `<h1>${approved ? 'Thank you' : 'Payment not completed'}</h1>
<p class="notice${approved ? '' : ' error'}" role="status">Returning to the shop…</p>
<form method="post" action="${escapeHtml(result.backUrl)}">
<input type="hidden" name="opensslResult" value="${escapeHtml(result.opensslResult)}">
<input type="hidden" name="result" value="${escapeHtml(result.opensslResult)}">
<button type="submit">Return to the shop</button>
</form>
<script>document.forms[0].submit();</script>`,
    brand,
  );
}

/** Inside the merchant's page: the result goes to it by postMessage, and the frame says so. */
function embeddedResultPage(result: CheckoutResult, brand: Brand): string {
  const approved = ['complete-ok', 'in-progress', 'void-ok'].includes(result.transactionStatus);
  const { backUrl: _backUrl, siteId: _siteId, ...message } = result;
  return page(
    'Payment',
    `<h1>${approved ? 'Payment complete' : 'Payment not completed'}</h1>
<p class="notice${approved ? '' : ' error'}" role="status">${approved ? 'Thank you!' : 'The payment failed.'}</p>
${notifyParent('complete', message)}`,
    brand,
  );
}

/**
 * A script telling the embedding page. Its target is any origin: the page's frame-ancestors policy already
 * limits who can embed it to the site's origins, and the message holds ids, a status and the result
 * encrypted under the site's key — nothing of the card.
 */
function notifyParent(kind: 'ready' | 'complete' | 'error', data: unknown): string {
  const message = JSON.stringify({ type: `tessera-checkout:${kind}`, data }).replace(/</g, '\\u003c');
  return `<script>if (window.parent !== window) window.parent.postMessage(${message}, '*');</script>`;
}

function themed(html: string, theme: string | undefined): string {
  if (theme !== 'dark') return html;
  return html.replace(
    '</style>',
    '  body { background: #15171a; color: #eee; } input { background: #22252a; color: #eee; } .notice { background: #1f2a3a; } .error { background: #3a1f1f; }\n</style>',
  );
}

const given = (value: string | undefined) =>
  value && value !== 'undefined' && value !== 'null' ? value : undefined;
