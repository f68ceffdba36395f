// Content negotiation for the routes that answer a page by default (as the services they mirror do) and
// JSON to a client that asks for it.

const JSON_TYPE = /^application\/(?:[\w.+-]*\+)?json$/;
const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);

/**
 * Whether the Accept header asks for JSON over HTML: a JSON media type with a quality above every HTML
 * one. Wildcards (`*∕*`, none at all) choose nothing, so they get the page.
 */
export function prefersJson(accept: string | undefined): boolean {
  let json = 0;
  let html = 0;
  for (const part of (accept ?? '').split(',')) {
    const [type = '', ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (!Number.isFinite(q)) continue;
    if (JSON_TYPE.test(type.trim())) json = Math.max(json, q);
    if (HTML_TYPES.has(type.trim())) html = Math.max(html, q);
  }
  return json > 0 && json > html;
}
