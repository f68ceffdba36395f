// Chromium for browser tests: Debian's package (playwright-core never downloads a browser here).
// Without it, browser tests are skipped on a developer machine, but CI sets TESSERA_REQUIRE_BROWSER=1
// (and installs chromium), so there they run or fail, never silently skip.
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const hasBrowser = existsSync(CHROMIUM_PATH) || process.env.TESSERA_REQUIRE_BROWSER === '1';

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
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
}
