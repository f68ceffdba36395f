// The mail a person receives: the message's text as plain text, and the same words as HTML with its links
// made clickable. One template for every message, so a code, a notice and a link look alike whichever
// part of the platform sends them.
import type { OutboundMessage } from './port.ts';

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

const URL_PATTERN = /https?:\/\/[^\s<>"']+[^\s<>"'.,;:!?)]/g;

function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

/** One paragraph's HTML: escaped text, each URL an anchor (escaped as well: URLs may hold `&`). */
function paragraphHtml(paragraph: string): string {
  let html = '';
  let last = 0;
  for (const match of paragraph.matchAll(URL_PATTERN)) {
    const url = match[0];
    html += escapeHtml(paragraph.slice(last, match.index));
    html += `<a href="${escapeHtml(url)}">${escapeHtml(url)}</a>`;
    last = match.index + url.length;
  }
  return html + escapeHtml(paragraph.slice(last));
}

export function renderMail(message: OutboundMessage): RenderedMail {
  const paragraphs = message.body.split(/\n+/).filter((p) => p.trim() !== '');
  const html = [
    '<!doctype html>',
    '<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">',
    `<title>${escapeHtml(message.subject)}</title></head>`,
    '<body style="margin:0;padding:24px;background:#f6f7f9;font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1b1f24">',
    '<div style="max-width:560px;margin:0 auto;background:#fff;border-radius:8px;padding:24px;line-height:1.5">',
    ...paragraphs.map((p) => `<p>${paragraphHtml(p)}</p>`),
    '</div></body></html>',
  ].join('\n');
  return { subject: message.subject, text: `${paragraphs.join('\n\n')}\n`, html };
}
