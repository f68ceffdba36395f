// The hosted checkout as the real service's SDK and shop plugins use it, on the checkout host:
// - `POST /` with `jsonRequest` and `checksum` shows the card page (nothing is made before the buyer pays);
// - `POST /checkout/embedded` is the same page inside a merchant's page (the iframe the script below
//   opens, allowed by the site's frameAncestors), also offering saved cards with a session token;
// - `POST /checkout/pay` pays, through 3-D Secure when the card asks, and hands the browser back to
//   backUrl with the encrypted result (a form POST of `opensslResult` and `result`), or, embedded, tells
//   the merchant's page by postMessage;
// - `GET /sdk/0.0.9/xmoney.js` defines `XMoneyPaymentForm`, the embedded form's loader.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { allowFraming } from '../../platform/http/security-headers.ts';
import {
  challengeRedirectPage,
  escapeHtml,
  noticePage,
  page,
  sendPage,
  withBrand,
} from '../../platform/pages/html.ts';
import { type Lang, languageOf, languageOfReply } from '../../platform/pages/i18n.ts';
import { messagesFor } from '../../platform/pages/messages.ts';
import type { Brand } from '../../platform/tenants/brand.ts';
import type { MerchantsService } from '../../platform/tenants/merchants-service.ts';
import type { StoredCard } from '../cards/stored-cards-service.ts';
import type { CheckoutSessions } from '../checkout/checkout-sessions.ts';
import type { CheckoutResult, HostedCheckout } from '../checkout/hosted-checkout.ts';
import { type InstrumentReading, readInstrument } from '../http/instrument-fields.ts';
import type { InstrumentCommand } from '../orders/payment-instrument.ts';
import { typedCardFields } from './card-form.ts';
import { type CheckoutRequest, openCheckoutRequest } from './checkout-request.ts';
import { EMBEDDED_FORM_SCRIPT } from './embedded-form-script.ts';
import { isLegacyCheckoutForm, legacyFormAsJsonRequest } from './legacy-checkout-form.ts';

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
    | 'lang'
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
  /** What a card is read with: the wallet rail and the clock's now */
  reading: () => InstrumentReading;
}

export async function registerHostedCheckoutRoutes(
  app: FastifyInstance,
  deps: HostedCheckoutPageDeps,
): Promise<void> {
  app.post<{ Body: CheckoutForm }>('/', (request, reply) => showCardPage(deps, request, reply, 'hosted'));

  app.post<{ Body: CheckoutForm }>('/checkout/embedded', (request, reply) =>
    showCardPage(deps, request, reply, 'embedded'),
  );

  app.post<{ Body: CheckoutForm }>('/checkout/pay', async (request, reply) => {
    const form = request.body ?? {};
    const mode: Mode = form.mode === 'embedded' ? 'embedded' : 'hosted';
    let opened: Opened;
    try {
      opened = await openForm(deps, request, mode, reply);
    } catch (err) {
      languageOf(request, reply);
      return refusal(reply, err, mode);
    }
    const { checkoutRequest, savedCards, lang } = opened;
    const m = messagesFor(lang);
    const savedCard = savedCards.find((c) => String(c.id) === form.savedCard);
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
      const instrument = cardOf(checkoutRequest, savedCard?.id, form, deps.reading());
      const charged = await deps.checkout.pay(checkoutRequest, instrument, mode, attempt);
      if ('replayed' in charged) {
        return sendCheckoutResult(
          reply,
          deps.checkout,
          charged.replayed.orderId,
          charged.replayed.transactionId,
          mode,
        );
      }
      if (charged.redirect) return sendPage(reply, challengeRedirectPage(charged.redirect, lang));
      return sendCheckoutResult(reply, deps.checkout, charged.order.id, charged.transaction.id, mode);
    } catch (err) {
      if (!(err instanceof DomainError) || err.status >= 500) throw err;
      const message = err.status === 402 ? m.declined(err.message) : m.invalid(err.message);
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

/** The posted form, the JSON one or the older flat one (legacy-checkout-form.ts), verified and its terms checked. */
async function openCheckoutForm(checkout: HostedCheckout, form: CheckoutForm): Promise<CheckoutRequest> {
  const posted = isLegacyCheckoutForm(form)
    ? await legacyFormAsJsonRequest(form, checkout.checksumKeys)
    : form;
  const request = await openCheckoutRequest(posted, checkout.checksumKeys);
  await checkout.checkTerms(request);
  return request;
}

/** What the buyer pays with: one of their saved cards (or the request's), or the card typed in the form. */
function cardOf(
  request: CheckoutRequest,
  savedCardId: number | undefined,
  form: CheckoutForm,
  reading: InstrumentReading,
): InstrumentCommand {
  const cardId = savedCardId ?? request.order.cardId;
  const fields = cardId !== undefined ? { cardId } : typedCardFields(form, request.order.customer.country);
  return readInstrument(fields, reading);
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
  const lang = languageOfReply(reply);
  const m = messagesFor(lang);
  if (!result) return sendPage(reply.code(404), noticePage(m.paymentResult, m.unknownPayment, lang));
  const brand = withBrand(reply, await checkout.brandOf(result.siteId));
  return sendPage(
    reply,
    mode === 'embedded' ? embeddedResultPage(result, brand, lang) : backToShopPage(result, brand, lang),
  );
}

interface Opened {
  checkoutRequest: CheckoutRequest;
  lang: Lang;
  /** The site's brand; its name is the site's own unless the brand names another */
  brand: Brand;
  savedCards: StoredCard[];
  /** The embedded form's own fields, carried to the pay step */
  carried: CheckoutForm;
}

async function openForm(
  deps: HostedCheckoutPageDeps,
  request: FastifyRequest,
  mode: Mode,
  reply: FastifyReply,
): Promise<Opened> {
  const form = (request.body ?? {}) as CheckoutForm;
  const checkoutRequest = await openCheckoutForm(deps.checkout, form);
  const lang = languageOf(request, reply, checkoutRequest.order.language);
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
    lang,
    brand,
    savedCards,
    carried,
  };
}

async function showCardPage(
  deps: HostedCheckoutPageDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  mode: Mode,
) {
  try {
    const opened = await openForm(deps, request, mode, reply);
    return sendPage(reply, cardPage(opened, {}, mode));
  } catch (err) {
    return refusal(reply, err, mode);
  }
}

/** A request that cannot be paid: a clear page, and nothing made. */
function refusal(reply: FastifyReply, err: unknown, mode: Mode): FastifyReply {
  if (!(err instanceof DomainError) || err.status >= 500) throw err;
  const lang = languageOfReply(reply);
  const m = messagesFor(lang);
  // The reason stays in English (it names the field for the shop's developer); the rest is the buyer's.
  const body = `<h1>${escapeHtml(m.refusedHeading)}</h1>
<p id="error" class="notice error" role="alert">${escapeHtml(err.message)}</p>
<p>${escapeHtml(m.refusedHint)}</p>${mode === 'embedded' ? notifyParent('error', { code: err.code, message: err.message, field: err.field ?? null }) : ''}`;
  // An embedded refusal is shown inside the merchant's page, which cannot be checked: framing stays allowed.
  if (mode === 'embedded') allowFraming(reply, ['*']);
  return sendPage(reply.code(err.status), page(m.refusedTitle, body, undefined, lang));
}

function cardPage(
  opened: Opened,
  values: CheckoutForm,
  mode: Mode,
  error?: { message: string; field?: string | undefined },
): string {
  const { checkoutRequest: r, lang, brand, savedCards, carried } = opened;
  const siteName = brand.name ?? '';
  const m = messagesFor(lang);
  const o = r.order.order;
  const amount = `${o.amount} ${o.currency}`;
  const recurring =
    o.type === 'recurring' && o.intervalType && o.intervalValue
      ? m.every(o.intervalValue, o.intervalType)
      : '';
  const heading = r.cardVerification ? m.saveCardWith(siteName) : m.payTo(amount, recurring, siteName);
  const hidden = (name: string, value: string) =>
    `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`;
  const input = (name: keyof CheckoutForm, label: string, attrs: string, prefill = '') => {
    const value = name === 'cardCvv' || name === 'cardNumber' ? '' : (values[name] ?? prefill);
    const invalid = error?.field === name ? ' aria-invalid="true" aria-describedby="error"' : '';
    return `<label for="${name}">${escapeHtml(label)}</label><input id="${name}" name="${name}" ${attrs} value="${escapeHtml(value)}"${invalid}>`;
  };
  const chosen = values.savedCard ?? (savedCards[0] ? String(savedCards[0].id) : 'new');
  const expiryOf = (c: StoredCard) => `${String(c.expiryMonth).padStart(2, '0')}/${c.expiryYear}`;
  const saved = savedCards.length
    ? `<fieldset><legend>${escapeHtml(m.savedCards)}</legend>
${savedCards
  .map(
    (c) =>
      `<label><input type="radio" name="savedCard" value="${c.id}"${chosen === String(c.id) ? ' checked' : ''}> ${escapeHtml(m.endingIn(c.brand.toUpperCase(), c.last4, expiryOf(c)))}</label>`,
  )
  .join('\n')}
<label><input type="radio" name="savedCard" value="new"${chosen === 'new' ? ' checked' : ''}> ${escapeHtml(m.aNewCard)}</label>
</fieldset>`
    : '';
  const required = savedCards.length ? '' : ' required';
  const holder = [r.order.customer.firstName, r.order.customer.lastName].filter(Boolean).join(' ');
  const body = `<h1>${escapeHtml(heading)}</h1>
${o.description ? `<p>${escapeHtml(o.description)}</p>` : ''}
${r.cardVerification ? `<p>${escapeHtml(m.verificationNote(amount))}</p>` : ''}
${error ? `<p id="error" class="notice error" role="alert">${escapeHtml(error.message)}</p>` : ''}
<form method="post" action="/checkout/pay">
${hidden('jsonRequest', r.jsonRequest)}${hidden('checksum', r.checksum)}${hidden('mode', mode)}${hidden('lang', lang)}${hidden('attempt', randomBytes(18).toString('base64url'))}
${Object.entries(carried)
  .map(([k, v]) => hidden(k, v ?? ''))
  .join('')}
${saved}
<fieldset><legend>${escapeHtml(savedCards.length ? m.newCard : m.card)}</legend>
${input('cardHolderName', m.nameOnCard, `autocomplete="cc-name"${required}`, holder)}
${input('cardNumber', m.cardNumber, `inputmode="numeric" autocomplete="cc-number"${required}`)}
${input('cardExpiryDate', m.expiry, `autocomplete="cc-exp" placeholder="${escapeHtml(m.expiryPlaceholder)}"${required}`)}
${input('cardCvv', m.securityCode, `inputmode="numeric" autocomplete="cc-csc"${required}`)}
${input('cardHolderCountry', m.country, `autocomplete="country" maxlength="2"${required}`, r.order.customer.country ?? '')}
${input('cardHolderState', m.state, 'maxlength="2"')}
</fieldset>
<button type="submit">${escapeHtml(r.cardVerification ? m.saveCard : m.pay(amount))}</button>
</form>
${mode === 'hosted' ? `<p><a id="back" href="${escapeHtml(r.order.backUrl)}">${escapeHtml(m.cancelAndReturn)}</a></p>` : notifyParent('ready', null)}`;
  return page(
    heading,
    body,
    brand,
    lang,
    mode === 'embedded' && carried.theme === 'dark' ? 'dark' : undefined,
  );
}

/** The browser goes back to the shop with the result, as a form POST (by script, or by hand without it). */
function backToShopPage(result: CheckoutResult, brand: Brand, lang: Lang): string {
  const m = messagesFor(lang);
  const approved = ['complete-ok', 'in-progress', 'void-ok'].includes(result.transactionStatus);
  return page(
    m.backToShop,
    `<h1>${escapeHtml(approved ? m.thankYou : m.notCompleted)}</h1>
<p class="notice${approved ? '' : ' error'}" role="status">${escapeHtml(m.returning)}</p>
<form method="post" action="${escapeHtml(result.backUrl)}" data-autosubmit="0">
<input type="hidden" name="opensslResult" value="${escapeHtml(result.opensslResult)}">
<input type="hidden" name="result" value="${escapeHtml(result.opensslResult)}">
<button type="submit">${escapeHtml(m.returnToShop)}</button>
</form>`,
    brand,
    lang,
  );
}

/** Inside the merchant's page: the result goes to it by postMessage, and the frame says so. */
function embeddedResultPage(result: CheckoutResult, brand: Brand, lang: Lang): string {
  const m = messagesFor(lang);
  const approved = ['complete-ok', 'in-progress', 'void-ok'].includes(result.transactionStatus);
  const { backUrl: _backUrl, siteId: _siteId, ...message } = result;
  return page(
    m.paymentResult,
    `<h1>${escapeHtml(approved ? m.paymentComplete : m.notCompleted)}</h1>
<p class="notice${approved ? '' : ' error'}" role="status">${escapeHtml(approved ? m.thankYou : m.paymentFailed)}</p>
${notifyParent('complete', message)}`,
    brand,
    lang,
  );
}

/**
 * A message for the embedding page, as JSON data that the pages' script posts (page.js). Its target is any origin: the page's frame-ancestors policy already
 * limits who can embed it to the site's origins, and the message holds ids, a status and the result
 * encrypted under the site's key — nothing of the card.
 */
function notifyParent(kind: 'ready' | 'complete' | 'error', data: unknown): string {
  const message = JSON.stringify({ type: `tessera-checkout:${kind}`, data }).replace(/</g, '\\u003c');
  return `<script type="application/json" id="tessera-parent-message">${message}</script>`;
}

const given = (value: string | undefined) =>
  value && value !== 'undefined' && value !== 'null' ? value : undefined;
