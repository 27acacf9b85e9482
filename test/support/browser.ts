// Debian's chromium driven by playwright-core for the tests of web pages: no browser download, a fresh
// profile per launch, and the flags that keep it off a network it cannot reach. Without
// /usr/bin/chromium a local run skips with a message; in CI (CI=true) that is a failure (.ci/run
// installs the package).
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { type TestDatabase, testDatabases } from './databases.js';
import { ROOT } from './root.js';
import { HANG_MS } from './wait.js';

export const CHROMIUM = '/usr/bin/chromium';

/** Why browser tests cannot run here, or undefined when they can. */
export function browserSkip(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined;
  const reason = `${CHROMIUM} is not installed (apt-get install chromium)`;
  if (process.env.CI === 'true') throw new Error(`${reason}; CI needs it`);
  return reason;
}

/**
 * Debian's chromium, headless. Every page and context it opens waits up to HANG_MS for an element or an
 * action (Playwright's own default is 30 s, which a loaded 2-core machine can spend on one upload's
 * setInputFiles): the waits are hang detectors, as every other wait of the tests (test/support/wait.ts).
 */
export async function launchChromium(): Promise<Browser> {
  const browser = await chromium.launch({
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
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    context.setDefaultTimeout(HANG_MS);
    return context;
  };
  const newPage = browser.newPage.bind(browser);
  browser.newPage = async (options) => {
    const page = await newPage(options);
    page.context().setDefaultTimeout(HANG_MS);
    return page;
  };
  return browser;
}

/** Where screenshots of a test's pages are kept (test-artifacts/, not committed). */
export function artifactsDir(name: string): string {
  const dir = join(ROOT, 'test-artifacts', name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
let axeSource: string | undefined;

/**
 * Serious and critical axe-core violations of the page, by rule id: every rule axe runs by default. axe
 * is evaluated through the DevTools protocol, which a page's Content-Security-Policy does not govern (the
 * console allows no inline script), once per document: the console moves between its pages by the URL's
 * hash in one document, and parsing axe's source again for each state cost more than the run itself. A
 * navigation to a new document (a reload, another path) loses it, and the next call evaluates it again.
 * Only violations are gathered in full (`resultTypes`): the rules, and what each finds wrong, are the same.
 */
export async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate('typeof globalThis.axe?.run === "function"'))) {
    axeSource ??= readFileSync(AXE, 'utf8');
    await page.evaluate(axeSource);
  }
  const result = await page.evaluate(async () => {
    const win = globalThis as unknown as {
      document: unknown;
      axe: {
        run(
          context: unknown,
          options: { resultTypes: string[] },
        ): Promise<{ violations: Array<{ id: string; impact: string }> }>;
      };
    };
    const { violations } = await win.axe.run(win.document, { resultTypes: ['violations'] });
    return violations.map((v) => ({ id: v.id, impact: v.impact }));
  });
  return result.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id);
}

/** Both widths the console is walked at: a laptop and a phone. */
export const BROWSER_WIDTHS = [1280, 390] as const;

/**
 * The widths a browser test walks on `database`. A page is the same JavaScript bundle whatever database
 * serves it, and what the server answers does not depend on the width it is shown at, so the cross-product
 * (every width on every database) tests nothing that one width per database does not: SQLite walks 1280
 * px and PostgreSQL 390 px, and every scenario still runs once on each database and at each width. When
 * PostgreSQL is skipped (a local run without it), SQLite walks both. FERRY_TEST_BROWSER_WIDTHS=all walks
 * every width on every database, as before (to chase a failure seen at one width only).
 */
export async function widthsOn(database: TestDatabase): Promise<number[]> {
  if (process.env.FERRY_TEST_BROWSER_WIDTHS === 'all') return [...BROWSER_WIDTHS];
  const postgres = (await testDatabases()).find((d) => d.name === 'postgres');
  if (postgres?.skip !== undefined) return database.name === 'sqlite' ? [...BROWSER_WIDTHS] : [];
  return database.name === 'sqlite' ? [1280] : [390];
}
