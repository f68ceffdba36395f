// Headers every answer carries, set in one place (an onSend hook at the root):
// - `X-Content-Type-Options: nosniff` and `Referrer-Policy: no-referrer` everywhere (a hosted page's URL
//   holds its token: it must not leak to the next site in a Referer);
// - `Cache-Control: no-store` unless the route chose otherwise (pages and answers show payment data);
// - on HTML, a strict Content-Security-Policy: scripts and stylesheets only from Tessera's own origin,
//   nothing inline. Tessera's pages carry no inline <script> or <style> (platform/pages/page-assets.ts), so a tag
//   that ever slipped past the escaping would not run: the answer is never rewritten to bless its tags,
//   and there is no nonce to steal. A page may not be framed (`frame-ancestors 'none'`, `X-Frame-Options: DENY`) unless
//   its site or store lists the origins allowed to embed it (allowFraming).
import type { FastifyInstance, FastifyReply } from 'fastify';

const framing = new WeakMap<FastifyReply, string[]>();

/** Lets this answer be framed by these origins (a site's or store's embedding list). */
export function allowFraming(reply: FastifyReply, origins: readonly string[]): FastifyReply {
  if (origins.length > 0) framing.set(reply, [...origins]);
  return reply;
}

const inlineStyles = new WeakSet<FastifyReply>();
const imageOrigins = new WeakMap<FastifyReply, string>();

/** Lets this page show images from one more origin (a tenant's logo). */
export function allowImagesFrom(reply: FastifyReply, origin: string): FastifyReply {
  imageOrigins.set(reply, origin);
  return reply;
}

/**
 * Lets this page apply inline styles (`style-src 'unsafe-inline'`): only for the API references, whose
 * Swagger UI sets style attributes from its own markup. Scripts stay nonce-only.
 */
export function allowInlineStyles(reply: FastifyReply): FastifyReply {
  inlineStyles.add(reply);
  return reply;
}

export function addSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    const origins = framing.get(reply) ?? [];
    const frameAncestors = origins.length > 0 ? origins.join(' ') : "'none'";
    if (origins.length === 0) reply.header('x-frame-options', 'DENY');
    const isHtml = String(reply.getHeader('content-type') ?? '').startsWith('text/html');
    if (!isHtml || typeof payload !== 'string') {
      reply.header('content-security-policy', `default-src 'none'; frame-ancestors ${frameAncestors}`);
      return payload;
    }
    reply.header(
      'content-security-policy',
      [
        "default-src 'none'",
        "script-src 'self'",
        inlineStyles.has(reply) ? "style-src 'self' 'unsafe-inline'" : "style-src 'self'",
        `img-src 'self' data:${imageOrigins.has(reply) ? ` ${imageOrigins.get(reply)}` : ''}`,
        "connect-src 'self'",
        "font-src 'self'",
        "base-uri 'none'",
        `frame-ancestors ${frameAncestors}`,
      ].join('; '),
    );
    return payload;
  });
}
