// Hosted payments pages: the checkout of a payment link (/pay/{hash}), where a buyer enters card details,
// goes through 3D Secure when asked and sees the result; and the 3D Secure return leg
// (/checkout/3ds/return/{token}) that sends the browser on to the order's backUrl with its outcome (an
// order of the hosted checkout form ends as that form's do, with the encrypted result).
// The checkout creates the customer and order through the same services as the API.
import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { allowFraming } from '../../platform/http/security-headers.ts';
import { ClientAmount, formatAmountIn } from '../../platform/money/amount.ts';
import { knownAsset } from '../../platform/money/assets.ts';
import {
  challengeRedirectPage,
  escapeHtml,
  noticePage,
  page,
  sendPage,
  withBrand,
} from '../../platform/pages/html.ts';
import { type Lang, languageOf } from '../../platform/pages/i18n.ts';
import { messagesFor } from '../../platform/pages/messages.ts';
import type { Brand } from '../../platform/tenants/brand.ts';
import type { HostedCheckout } from '../checkout/hosted-checkout.ts';
import { identifierForEmail } from '../customers/customer-identifier.ts';
import { type InstrumentReading, readInstrument } from '../http/instrument-fields.ts';
import type { LinkRow } from '../links/payment-links-service.ts';
import type { PaymentsServices } from '../payments-services.ts';
import { typedCardFields } from './card-form.ts';
import { sendCheckoutResult } from './hosted-checkout-routes.ts';

type CheckoutBody = Partial<
  Record<
    | 'email'
    | 'cardHolderName'
    | 'cardNumber'
    | 'cardExpiryDate'
    | 'cardCvv'
    | 'cardHolderCountry'
    | 'cardHolderState',
    string
  >
>;

export async function registerCheckoutPageRoutes(
  app: FastifyInstance,
  deps: {
    payments: PaymentsServices;
    publicUrl: string;
    /** The origins a site lets embed its checkout (a frame on the merchant's own page) */
    frameAncestorsOf: (siteId: number) => Promise<string[]>;
    /** Orders of the hosted checkout form end there, with their encrypted result */
    hostedCheckout: HostedCheckout;
    /** What a site's pages show of it */
    brandOf: (siteId: number) => Promise<Brand>;
    /** What a typed card is read with: the wallet rail and the clock's now */
    reading: () => InstrumentReading;
  },
): Promise<void> {
  const { payments } = deps;

  app.get<{ Params: { token: string } }>('/checkout/3ds/return/:token', async (request, reply) => {
    const lang = languageOf(request, reply);
    const m = messagesFor(lang);
    const leg = await payments.transactions.returnLeg(request.params.token);
    if (!leg)
      return sendPage(
        reply.code(404),
        page(m.notFound, `<h1>${escapeHtml(m.notFound)}</h1>`, undefined, lang),
      );
    const t = leg.transaction;
    if (leg.checkout) {
      allowFraming(reply, await deps.frameAncestorsOf(leg.siteId));
      return sendCheckoutResult(reply, deps.hostedCheckout, t.order_id, t.id, leg.checkout);
    }
    const result = { orderId: String(t.order_id), transactionId: String(t.id), transactionStatus: t.status };
    if (leg.backUrl) {
      const url = new URL(leg.backUrl);
      for (const [k, v] of Object.entries(result)) url.searchParams.set(k, v);
      return reply.redirect(url.toString(), 303);
    }
    return sendPage(
      reply,
      page(
        m.paymentResult,
        `<h1>${escapeHtml(m.paymentResult)}</h1><p role="status">${escapeHtml(m.outcome[t.status] ?? t.status)}</p>`,
        undefined,
        lang,
      ),
    );
  });

  app.get<{ Params: { hash: string } }>('/pay/:hash', async (request, reply) => {
    const lang = languageOf(request, reply);
    const m = messagesFor(lang);
    const found = await payments.links.payable(request.params.hash);
    if ('unavailable' in found)
      return sendPage(
        reply.code(404),
        page(
          m.paymentLink,
          `<h1>${escapeHtml(m.paymentLink)}</h1><p class="notice error" role="alert">${escapeHtml(found.unavailable)}</p>`,
          undefined,
          lang,
        ),
      );
    allowFraming(reply, await deps.frameAncestorsOf(found.link.site_id));
    return sendPage(
      reply,
      checkoutPage(found.link, withBrand(reply, await deps.brandOf(found.link.site_id)), lang, {}),
    );
  });

  app.post<{ Params: { hash: string }; Body: CheckoutBody }>('/pay/:hash', async (request, reply) => {
    const lang = languageOf(request, reply);
    const m = messagesFor(lang);
    const found = await payments.links.payable(request.params.hash);
    if ('unavailable' in found)
      return sendPage(
        reply.code(404),
        page(
          m.paymentLink,
          `<h1>${escapeHtml(m.paymentLink)}</h1><p class="notice error" role="alert">${escapeHtml(found.unavailable)}</p>`,
          undefined,
          lang,
        ),
      );
    const link = found.link;
    allowFraming(reply, await deps.frameAncestorsOf(link.site_id));
    const body = request.body ?? {};
    const merchant = await payments.links.merchantOf(link);
    try {
      const email = (body.email ?? '').trim().toLowerCase();
      if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) {
        throw new DomainError('validation_failed', m.invalidEmail, { field: 'email' });
      }
      const customerId = await payments.customers.findOrCreate(merchant, {
        siteId: link.site_id,
        identifier: identifierForEmail(email),
        email,
      });
      const result = await payments.orders.create(merchant, {
        amount: ClientAmount.fromMinor(BigInt(link.amount), knownAsset(link.currency)),
        currency: link.currency,
        orderType: link.order_type,
        customerId,
        siteId: link.site_id,
        description: link.description ?? undefined,
        intervalType: link.interval_type ?? undefined,
        intervalValue: link.interval_value ?? undefined,
        backUrl: `${deps.publicUrl}/pay/${link.hash}/result?lang=${lang}`,
        instrument: readInstrument(typedCardFields(body), deps.reading()),
        paymentLinkHash: link.hash,
        // The buyer gave their address on the link's page: each payment's receipt goes there.
        invoiceEmail: email,
      });
      if (result.redirect) {
        // Straight on to the issuer's challenge.
        return sendPage(reply, challengeRedirectPage(result.redirect, lang));
      }
      const query = new URLSearchParams({
        orderId: String(result.order.id),
        transactionId: String(result.transaction.id),
        lang,
      });
      return reply.redirect(`/pay/${link.hash}/result?${query}`, 303);
    } catch (err) {
      if (!(err instanceof DomainError) || err.status >= 500) throw err;
      const message =
        err.status === 402
          ? m.declined(err.message)
          : err.field === 'email'
            ? err.message
            : m.invalid(err.message);
      return sendPage(
        reply.code(err.status === 402 ? 402 : 400),
        checkoutPage(
          link,
          withBrand(reply, await deps.brandOf(link.site_id)),
          lang,
          body,
          message,
          err.field,
        ),
      );
    }
  });

  app.get<{ Params: { hash: string }; Querystring: { transactionId?: string } }>(
    '/pay/:hash/result',
    async (request, reply) => {
      const lang = languageOf(request, reply);
      const m = messagesFor(lang);
      const t = await payments.links.transactionOf(
        request.params.hash,
        Number(request.query.transactionId ?? 0),
      );
      if (!t) return sendPage(reply.code(404), noticePage(m.paymentResult, m.unknownPayment, lang));
      const approved = t.status === 'complete-ok' || t.status === 'in-progress';
      // The link's backUrl gets the buyer back to the shop with the outcome, as an order's backUrl does.
      const back = t.back_url ? withResult(t.back_url, t) : undefined;
      if (approved && back) return reply.redirect(back, 303);
      return sendPage(
        reply,
        page(
          m.paymentResult,
          `<h1>${escapeHtml(approved ? m.thankYou : m.notCompleted)}</h1>
<p class="notice${approved ? '' : ' error'}" role="status">${escapeHtml(m.outcome[t.status] ?? t.status)}</p>
<p>${escapeHtml(m.order(t.order_id, `${formatAmountIn(BigInt(t.amount), t.currency)} ${t.currency}`))}</p>
${approved ? '' : `<p><a id="retry" href="/pay/${escapeHtml(request.params.hash)}?lang=${lang}">${escapeHtml(m.tryAgain)}</a></p>`}
${back ? `<p><a id="back" href="${escapeHtml(back)}">${escapeHtml(m.backToShop)}</a></p>` : ''}`,
          withBrand(reply, await deps.brandOf(t.site_id)),
          lang,
        ),
      );
    },
  );
}

/** The shop's URL with the payment's outcome, as the 3D Secure return leg sends it. */
function withResult(url: string, t: { id: number; order_id: number; status: string }): string {
  const back = new URL(url);
  back.searchParams.set('orderId', String(t.order_id));
  back.searchParams.set('transactionId', String(t.id));
  back.searchParams.set('transactionStatus', t.status);
  return back.toString();
}

function checkoutPage(
  link: LinkRow,
  brand: Brand,
  lang: Lang,
  values: CheckoutBody,
  error?: string,
  field?: string,
): string {
  const m = messagesFor(lang);
  const amount = `${formatAmountIn(BigInt(link.amount), link.currency)} ${link.currency}`;
  const recurring =
    link.order_type === 'recurring' && link.interval_value && link.interval_type
      ? m.every(link.interval_value, link.interval_type)
      : '';
  const input = (name: keyof CheckoutBody, label: string, attrs: string) =>
    `<label for="${name}">${escapeHtml(label)}</label><input id="${name}" name="${name}" ${attrs} value="${escapeHtml(values[name] === undefined || name === 'cardCvv' || name === 'cardNumber' ? '' : String(values[name]))}"${field === name ? ' aria-invalid="true" aria-describedby="error"' : ''}>`;
  return page(
    m.pay(amount),
    `<h1>${escapeHtml(m.pay(amount) + recurring)}</h1>
${link.description ? `<p>${escapeHtml(link.description)}</p>` : ''}
${error ? `<p id="error" class="notice error" role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" action="/pay/${escapeHtml(link.hash)}">
<input type="hidden" name="lang" value="${lang}">
<fieldset><legend>${escapeHtml(m.yourDetails)}</legend>
${input('email', m.email, 'type="email" autocomplete="email" required')}
</fieldset>
<fieldset><legend>${escapeHtml(m.card)}</legend>
${input('cardHolderName', m.nameOnCard, 'autocomplete="cc-name" required')}
${input('cardNumber', m.cardNumber, 'inputmode="numeric" autocomplete="cc-number" required')}
${input('cardExpiryDate', m.expiry, `autocomplete="cc-exp" placeholder="${escapeHtml(m.expiryPlaceholder)}" required`)}
${input('cardCvv', m.securityCode, 'inputmode="numeric" autocomplete="cc-csc" required')}
${input('cardHolderCountry', m.country, 'autocomplete="country" maxlength="2" required')}
${input('cardHolderState', m.state, 'maxlength="2"')}
</fieldset>
<button type="submit">${escapeHtml(m.pay(amount))}</button>
</form>
${link.back_url ? `<p><a id="back" href="${escapeHtml(link.back_url)}">${escapeHtml(m.cancelAndReturn)}</a></p>` : ''}`,
    brand,
    lang,
  );
}
