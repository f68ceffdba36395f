// The language of a hosted page: English or Romanian (the real service's pages speak both), from the
// request's `lang` or `language` parameter (query or form), a language the page's own request carries
// (the hosted checkout's `language` member), else the browser's Accept-Language; English otherwise. The
// answer remembers it, so the page's frame (its SANDBOX banner) speaks it too.
import type { FastifyReply, FastifyRequest } from 'fastify';

export type Lang = 'en' | 'ro';

const LANGS: readonly Lang[] = ['en', 'ro'];
const chosen = new WeakMap<FastifyReply, Lang>();

const asLang = (value: unknown): Lang | undefined => {
  const code = typeof value === 'string' ? value.trim().toLowerCase().slice(0, 2) : '';
  return (LANGS as readonly string[]).includes(code) ? (code as Lang) : undefined;
};

/** Picks the page's language and remembers it on the answer. */
export function languageOf(request: FastifyRequest, reply: FastifyReply, requested?: string): Lang {
  const query = request.query as Record<string, unknown> | undefined;
  const body = request.body as Record<string, unknown> | undefined;
  const lang =
    asLang(query?.lang) ??
    asLang(query?.language) ??
    asLang(body?.lang) ??
    asLang(body?.language) ??
    asLang(requested) ??
    fromAcceptLanguage(String(request.headers['accept-language'] ?? '')) ??
    'en';
  chosen.set(reply, lang);
  return lang;
}

/** The language an answer's page was written in (English when none was chosen). */
export const languageOfReply = (reply: FastifyReply): Lang => chosen.get(reply) ?? 'en';

/** The preferred supported language of an Accept-Language header (q-values respected). */
function fromAcceptLanguage(header: string): Lang | undefined {
  const ranked = header
    .split(',')
    .map((part) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = Number(
        params
          .find((p) => p.trim().startsWith('q='))
          ?.trim()
          .slice(2) ?? '1',
      );
      return { lang: asLang(tag), q: Number.isFinite(q) ? q : 0 };
    })
    .filter((r): r is { lang: Lang; q: number } => r.lang !== undefined && r.q > 0)
    .sort((a, b) => b.q - a.q);
  return ranked[0]?.lang;
}
