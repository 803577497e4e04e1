import fs from 'node:fs';
import type { Browser } from 'playwright-core';

/** Debian's chromium, which `.ci/run` installs; a browser test skips with a note where it is absent. */
export const CHROMIUM = '/usr/bin/chromium';

export const chromiumInstalled = (): boolean => fs.existsSync(CHROMIUM);

/** Headless chromium that talks to nothing but what the test points it at. */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
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
