// Headers every answer carries, set in one place (an onSend hook at the root):
// - `X-Content-Type-Options: nosniff` and `Referrer-Policy: no-referrer` everywhere (a hosted page's URL
//   holds its token: it must not leak to the next site in a Referer);
// - `Cache-Control: no-store` unless the route chose otherwise (pages and answers show payment data);
// - on HTML, a strict Content-Security-Policy with a fresh nonce. Hosted pages interpolate only escaped
//   values, so every <script> and <style> tag in them is ours: each gets the nonce here, and nothing
//   else can run. A page may not be framed (`frame-ancestors 'none'`, `X-Frame-Options: DENY`) unless
//   its site or store lists the origins allowed to embed it (allowFraming).
import { randomBytes } from 'node:crypto';
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

const TAGS = /<(script|style)\b([^>]*)>/gi;

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
    const nonce = randomBytes(16).toString('base64');
    reply.header(
      'content-security-policy',
      [
        "default-src 'none'",
        `script-src 'self' 'nonce-${nonce}'`,
        inlineStyles.has(reply) ? "style-src 'self' 'unsafe-inline'" : `style-src 'self' 'nonce-${nonce}'`,
        `img-src 'self' data:${imageOrigins.has(reply) ? ` ${imageOrigins.get(reply)}` : ''}`,
        "connect-src 'self'",
        "font-src 'self'",
        "base-uri 'none'",
        `frame-ancestors ${frameAncestors}`,
      ].join('; '),
    );
    // A replayed page (an idempotent answer) already carries an older nonce: it is replaced.
    return payload.replace(
      TAGS,
      (_tag, name: string, attributes: string) =>
        `<${name} nonce="${nonce}"${attributes.replace(/\s+nonce="[^"]*"/gi, '')}>`,
    );
  });
}
