// Minimal, safe HTML for hosted pages: every interpolated value is escaped.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { allowImagesFrom } from '../http/security-headers.ts';
import type { Brand } from '../tenants/brand.ts';
import { type Lang, languageOfReply } from './i18n.ts';
import { messagesFor } from './messages.ts';
import { DEFAULT_ACCENT, PAGE_SCRIPT, pageStylesheet } from './page-assets.ts';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/**
 * A hosted page: escaped title, the caller's (escaped) body, and the tenant's brand when it has one — its
 * name and logo at the top, its colour on buttons with black or white text, whichever reads better.
 * A page with a logo must be sent through withBrand (or sendBrandedPage), which lets its origin in.
 */
export function page(title: string, body: string, brand?: Brand, lang: Lang = 'en', theme?: 'dark'): string {
  const header =
    brand?.name || brand?.logoUrl
      ? `<header class="brand">${brand.logoUrl ? `<img src="${escapeHtml(brand.logoUrl)}" alt="${escapeHtml(brand.name ?? '')}" height="48">` : ''}${brand.name ? `<span>${escapeHtml(brand.name)}</span>` : ''}</header>`
      : '';
  // No inline style or script: both are same-origin files (page-assets.ts), the only code the CSP runs.
  return `<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="${escapeHtml(pageStylesheet(brand?.color ?? DEFAULT_ACCENT, theme))}">
<script src="${PAGE_SCRIPT}" defer></script>
</head>
<body><main>${header}${body}</main></body>
</html>`;
}

/**
 * In sandbox mode every hosted page says so at its top, so a shopper, a cardholder or a developer never
 * mistakes it for a real payment (the docs' Swagger UI excepted: it is not a page of ours).
 */
export function addSandboxBanner(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const isHtml = String(reply.getHeader('content-type') ?? '').startsWith('text/html');
    const isReference = request.url.includes('/docs/') && !request.url.startsWith('/docs/guides/');
    if (!isHtml || typeof payload !== 'string' || isReference) return payload;
    const banner = `<p class="sandbox-banner" role="note">${escapeHtml(messagesFor(languageOfReply(reply)).sandboxBanner)}</p>`;
    return payload.replace('<body><main>', `<body><main>${banner}`);
  });
}

/** A page that only says one thing: a heading and a sentence (not found, unknown payment, done). */
export function noticePage(heading: string, text: string, lang: Lang, title = heading): string {
  return page(title, `<h1>${escapeHtml(heading)}</h1><p>${escapeHtml(text)}</p>`, undefined, lang);
}

/** The brand a page of this answer shows: its logo's origin is let through the page's image policy. */
export function withBrand(reply: FastifyReply, brand: Brand): Brand {
  if (brand.logoUrl) allowImagesFrom(reply, new URL(brand.logoUrl).origin);
  return brand;
}

/** Answers a hosted page with the tenant's brand. */
export function sendBrandedPage(
  reply: FastifyReply,
  title: string,
  body: string,
  brand: Brand,
  lang: Lang = 'en',
): FastifyReply {
  return sendPage(reply, page(title, body, withBrand(reply, brand), lang));
}

/** Answers a hosted page (the security headers, no-store included, are added to every answer). */
export function sendPage(reply: FastifyReply, html: string): FastifyReply {
  return reply.type('text/html; charset=utf-8').send(html);
}

/**
 * Sends the buyer's browser on to its bank's 3D Secure challenge: a form posting the card network's
 * params to the ACS, submitted by script, or by hand without JavaScript.
 */
export function challengeRedirectPage(
  redirect: {
    url: string;
    formMethod: 'POST' | 'GET';
    params: Record<string, string>;
  },
  lang: Lang = 'en',
): string {
  const m = messagesFor(lang);
  const fields = Object.entries(redirect.params)
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join('');
  return page(
    m.authenticationTitle,
    `<h1>${escapeHtml(m.authenticationNeeded)}</h1><p>${escapeHtml(m.bankAsks)}</p>
<form method="${redirect.formMethod.toLowerCase()}" action="${escapeHtml(redirect.url)}" data-autosubmit="0">${fields}<button type="submit">${escapeHtml(m.continueToBank)}</button></form>`,
    undefined,
    lang,
  );
}
