// Debian's chromium driven by playwright-core for the tests of web pages: no browser download, a fresh
// profile per launch, and the flags that keep it off a network it cannot reach. Without
// /usr/bin/chromium a local run skips with a message; in CI (CI=true) that is a failure (.ci/run
// installs the package).
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Why browser tests cannot run here, or undefined when they can. */
export function browserSkip(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined;
  const reason = `${CHROMIUM} is not installed (apt-get install chromium)`;
  if (process.env.CI === 'true') throw new Error(`${reason}; CI needs it`);
  return reason;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
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

/** Where screenshots of a test's pages are kept (test-artifacts/, not committed). */
export function artifactsDir(name: string): string {
  const dir = join(new URL('../..', import.meta.url).pathname, 'test-artifacts', name);
  mkdirSync(dir, { recursive: true });
  return dir;
}
