// The console's markup: a tagged template that escapes every interpolated value unless it is markup made
// by this same template, so a page cannot forget to escape a tenant's or a shopper's text.
import { escapeHtml } from '../pages/html.ts';

export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

type Part = Html | string | number | bigint | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false || part === true) return '';
  if (part instanceof Html) return part.value;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(String(part));
}

export function h(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

/** Markup from a trusted source (a constant of ours): not escaped. */
export const trusted = (markup: string): Html => new Html(markup);
