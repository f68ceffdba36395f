// Chromium for browser tests: Debian's package (playwright-core never downloads a browser here).
// Without it, browser tests are skipped on a developer machine, but CI sets TESSERA_REQUIRE_BROWSER=1
// (and installs chromium), so there they run or fail, never silently skip.
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const hasBrowser = existsSync(CHROMIUM_PATH) || process.env.TESSERA_REQUIRE_BROWSER === '1';

/**
 * Chromium, headless. Every page it opens is watched: a Content-Security-Policy violation or an uncaught
 * script error on a hosted page fails the test file when the browser closes.
 */
export async function launchBrowser(): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const problems: string[] = [];
  const newPage = browser.newPage.bind(browser);
  browser.newPage = async (...args) => {
    const page = await newPage(...args);
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy|Refused to/.test(message.text())) {
        problems.push(`${page.url()}: ${message.text()}`);
      }
    });
    page.on('pageerror', (error) => problems.push(`${page.url()}: ${error.message}`));
    return page;
  };
  const close = browser.close.bind(browser);
  browser.close = async (...args) => {
    await close(...args);
    if (problems.length > 0)
      throw new Error(`the hosted pages broke in the browser:\n${problems.join('\n')}`);
  };
  return browser;
}
