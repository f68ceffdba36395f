// The hosted pages' stylesheet and script, served from Tessera's own origin: the pages hold no inline
// <style> or <script>, so their CSP allows only same-origin files and nothing injected into a page can
// run (docs/security.md). The stylesheet takes the tenant's accent colour and the embedded form's theme
// from its query, checked here: nothing else of the request reaches the CSS.
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { textOn } from '../tenants/brand.ts';

export const DEFAULT_ACCENT = '#1d4ed8';
const PAGE_CSS = readFileSync(new URL('./assets/page.css', import.meta.url), 'utf8');
const PAGE_JS = readFileSync(new URL('./assets/page.js', import.meta.url), 'utf8');
/** Tessera's mark (a white T on the console's navy), 32 px, an ICO holding a PNG */
const FAVICON = readFileSync(new URL('./assets/favicon.ico', import.meta.url));
const DARK =
  'body { background: #15171a; color: #eee; } input { background: #22252a; color: #eee; } .notice { background: #1f2a3a; } .error { background: #3a1f1f; }\n';

/** The stylesheet's URL for a page in this accent colour (#rrggbb) and theme. */
export function pageStylesheet(accent: string, theme?: 'dark'): string {
  return `/assets/page.css?accent=${accent.slice(1).toLowerCase()}${theme ? `&theme=${theme}` : ''}`;
}

export const PAGE_SCRIPT = '/assets/page.js';

export function registerPageAssets(app: FastifyInstance): void {
  app.get<{ Querystring: { accent?: string; theme?: string } }>(
    '/assets/page.css',
    { schema: { hide: true } },
    async (request, reply) => {
      const given = request.query.accent;
      const accent = typeof given === 'string' && /^[0-9a-f]{6}$/i.test(given) ? `#${given}` : DEFAULT_ACCENT;
      const root = `:root { --accent: ${accent}; --accent-text: ${textOn(accent)}; }\n`;
      return reply
        .type('text/css; charset=utf-8')
        .header('cache-control', 'public, max-age=3600')
        .send(root + PAGE_CSS + (request.query.theme === 'dark' ? DARK : ''));
    },
  );
  // Every browser asks for it, on every page of every origin it visits: a 404 there is noise in the
  // console's network log and in the access log.
  app.get('/favicon.ico', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('image/x-icon').header('cache-control', 'public, max-age=86400').send(FAVICON),
  );
  app.get('/assets/page.js', { schema: { hide: true } }, async (_request, reply) =>
    reply
      .type('text/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=3600')
      .send(PAGE_JS),
  );
}
