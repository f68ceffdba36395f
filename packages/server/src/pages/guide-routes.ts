// `GET /docs/guides/{name}`: the guides of docs/ (the quick starts first among them) as pages, so the
// landing page can link a newcomer to them on the running server. Markdown is rendered with raw HTML
// off; a link to another guide (`payments.md#disputes`) stays a link between these pages.
import { readdir, readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import MarkdownIt from 'markdown-it';
import { page, sendPage } from '../platform/pages/html.ts';

const DOCS = new URL('../../../../docs/', import.meta.url);
const GUIDE_NAME = /^[a-z0-9-]+$/;

export const QUICK_STARTS = [
  { name: 'quickstart-payments', title: 'Take a card payment' },
  { name: 'quickstart-crypto', title: 'Get paid in crypto' },
  { name: 'quickstart-issuing', title: 'Issue a card and see it spend' },
] as const;

export async function registerGuideRoutes(app: FastifyInstance): Promise<void> {
  const names = new Set(
    (await readdir(DOCS).catch(() => [] as string[]))
      .filter((file) => file.endsWith('.md'))
      .map((file) => file.slice(0, -3))
      .filter((name) => GUIDE_NAME.test(name)),
  );
  const markdown = new MarkdownIt({ html: false });
  const renderLink = markdown.renderer.rules.link_open;
  markdown.renderer.rules.link_open = (tokens, index, options, env, self) => {
    const token = tokens[index];
    const href = String(token?.attrGet('href') ?? '');
    if (token && href && !/^[a-z]+:|^\//i.test(href)) token.attrSet('href', href.replace(/\.md(?=#|$)/, ''));
    return renderLink
      ? renderLink(tokens, index, options, env, self)
      : self.renderToken(tokens, index, options);
  };
  // A code block or a table wider than the screen scrolls: focusable, so a keyboard can scroll it too.
  const renderFence = markdown.renderer.rules.fence;
  markdown.renderer.rules.fence = (tokens, index, options, env, self) =>
    (renderFence ? renderFence(tokens, index, options, env, self) : '').replace(
      '<pre>',
      '<pre tabindex="0">',
    );
  markdown.renderer.rules.table_open = () =>
    '<div class="scroll" tabindex="0" role="region" aria-label="Table"><table>';
  markdown.renderer.rules.table_close = () => '</table></div>';
  const rendered = new Map<string, string>();

  app.get('/docs/guides/:name', { schema: { hide: true } }, async (request, reply) => {
    const { name } = request.params as { name: string };
    if (!names.has(name)) return reply.code(404).type('text/plain').send('no such guide');
    let html = rendered.get(name);
    if (html === undefined) {
      const text = await readFile(new URL(`${name}.md`, DOCS), 'utf8');
      const title = /^# (.+)$/m.exec(text)?.[1] ?? name;
      html = page(`${title} · Tessera`, `<article class="guide">${markdown.render(text)}</article>`);
      rendered.set(name, html);
    }
    return sendPage(reply, html);
  });
}
