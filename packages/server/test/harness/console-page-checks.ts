// What every console page is held to in Chromium (docs/console.md, Layout): no overflow at 390 px or
// 1280 px, no serious or critical axe-core violation, the sandbox banner, lists that fold or scroll as
// they should, no status code where its words belong and no link to an object that is a bare number. The console's browser tests walk their pages through these.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { LABELS } from '../../src/platform/console/labels.ts';

/** Every code the label table words: a cell or fact whose whole text is one of these shows a code, not words */
const SLUGS = [...new Set(Object.values(LABELS).flatMap((table) => Object.keys(table)))];

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * At 390 px the menu is folded (the page starts with its content) and lists stack: no cell reaches past
 * the screen. At any width a table wider than its box scrolls inside it, with the edge shadow showing so.
 */
export async function checkConsoleLayout(page: Page, name: string, width: number, problems: string[]) {
  const layout = (await page.evaluate(
    `(() => {
    const content = document.querySelector('#content');
    const cells = [...document.querySelectorAll('td')];
    const boxes = [...document.querySelectorAll('table')].filter((t) => !t.closest('.chart')).map((t) => t.closest('.scroll'));
    return {
      contentTop: content ? content.getBoundingClientRect().top : 0,
      cellsPastScreen: cells.filter((td) => td.getBoundingClientRect().right > window.innerWidth + 1).length,
      tablesOutsideScroll: boxes.filter((b) => !b).length,
      labelsApartFromInputs: [...document.querySelectorAll('form.filters label')].filter((l) => {
        const input = document.getElementById(l.htmlFor);
        return input && Math.abs(input.getBoundingClientRect().left - l.getBoundingClientRect().left) > 2;
      }).length,
      scrollersWithoutShadow: boxes.filter((b) => b && b.scrollWidth > b.clientWidth && !getComputedStyle(b).backgroundImage.includes('gradient')).length,
      scrollingTables: boxes.filter((b) => b && b.scrollWidth > b.clientWidth + 1).length,
      slugs: [...document.querySelectorAll('td, dd')].map((c) => c.textContent.trim()).filter((t) => slugs.includes(t)),
      bareIds: [...document.querySelectorAll('td, dd')].filter((c) => c.querySelector('a') && /^\\d+$/.test(c.textContent.trim())).map((c) => (c.dataset.label || (c.previousElementSibling && c.previousElementSibling.textContent) || '') + ' ' + c.textContent.trim()),
    };
  })()`.replace('slugs.includes', `${JSON.stringify(SLUGS)}.includes`),
  )) as {
    slugs: string[];
    bareIds: string[];
    contentTop: number;
    cellsPastScreen: number;
    labelsApartFromInputs: number;
    tablesOutsideScroll: number;
    scrollersWithoutShadow: number;
    scrollingTables: number;
  };
  if (width <= 400 && layout.contentTop > 200)
    problems.push(`${name}: the content starts ${layout.contentTop} px down (at most 200)`);
  if (width >= 1280 && layout.scrollingTables > 0)
    problems.push(`${name}: ${layout.scrollingTables} tables do not fit a wide screen (a column cut)`);
  if (width <= 400 && layout.cellsPastScreen > 0)
    problems.push(`${name}: ${layout.cellsPastScreen} cells reach past the screen`);
  if (layout.labelsApartFromInputs > 0) problems.push(`${name}: a filter label not above its own input`);
  if (layout.slugs.length > 0)
    problems.push(
      `${name}: codes shown where words belong (labels.ts): ${[...new Set(layout.slugs)].join(', ')}`,
    );
  if (layout.bareIds.length > 0)
    problems.push(
      `${name}: a bare number where an object is linked (say what it is): ${layout.bareIds.join(', ')}`,
    );
  if (layout.tablesOutsideScroll > 0) problems.push(`${name}: a table outside a scroll box`);
  if (layout.scrollersWithoutShadow > 0)
    problems.push(`${name}: a table cut off with no sign that it scrolls`);
}

export async function checkPage(page: Page, name: string, problems: string[]) {
  const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'));
  if (overflow > 0) problems.push(`${name}: ${overflow} px wider than the screen`);
  if (!((await page.getByRole('note').first().textContent()) ?? '').includes('a test environment')) {
    problems.push(`${name}: no sandbox banner`);
  }
  await page.evaluate(AXE);
  const violations = (await page.evaluate(`axe.run({ resultTypes: ['violations'] }).then((result) =>
    result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => v.id + ' (' + v.impact + ') at ' + v.nodes.map((n) => n.target.join(' ')).join(', ')))`)) as string[];
  for (const v of violations) problems.push(`${name}: ${v}`);
}
