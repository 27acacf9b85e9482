import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Browser, Locator, Page } from 'playwright-core';
import { listen } from '../../src/server.js';
import { startTestApp, type TestApp } from './app.js';
import { artifactsDir, launchChromium } from './browser.js';
import type { TestDatabase } from './databases.js';
import { type S3rverHandle, startS3rver } from './s3rver.js';
import { TestSmtp } from './smtp.js';
import { type Call, createLocation, newWorkspace, s3Client, seedBucket } from './transfers.js';

export const WIDTHS = [1280, 390] as const;

export { buildConsole } from './console-build.js';

export interface ConsoleFiles {
  t: TestApp;
  smtp: TestSmtp;
  client: S3Client;
  browser: Browser;
  base: string;
  token: string;
  label: string;
  id: string;
  bucket: string;
  call: Call;
  /** A signed-in tab at `width` px, at `hash`. */
  tab(width: number, hash: string): Promise<Page>;
  /** A full-page screenshot in test-artifacts/console/, named with the width and the database. */
  shot(page: Page, name: string, width: number): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * Starts everything; the bucket holds `seed.txt`, and for each width `sel<width>/` (one.txt, two.txt,
 * pic.bin) and `docs<width>/` (one.txt, two.txt).
 */
export async function startConsoleFiles(database: TestDatabase): Promise<ConsoleFiles> {
  const s3: S3rverHandle = await startS3rver();
  const smtp = await new TestSmtp().start();
  const client = s3Client(s3.endpoint);
  const t = await startTestApp(database, {
    env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32', FERRY_PORT: '0', FERRY_SMTP_URL: smtp.url },
    worker: true,
  });
  // On a port of the system's choice, which the links it makes then name.
  const base = await listen(t.app, t.config);
  const call = await newWorkspace(t);
  const token = (await call({ method: 'POST', url: '/v1/tokens', payload: { name: 'files' } })).json().token;
  const { id, label } = await createLocation(call, {
    provider: 's3',
    secret: { access_key_id: 'AKID', secret_access_key: 'secret' },
    metadata: { endpoint: s3.endpoint },
  });
  const seeded: Record<string, string> = { 'seed.txt': 'seed' };
  for (const w of WIDTHS) {
    Object.assign(seeded, {
      [`sel${w}/one.txt`]: 'first file\n',
      [`sel${w}/two.txt`]: 'second file\n',
      [`sel${w}/pic.bin`]: 'not text',
      [`docs${w}/one.txt`]: 'first file\n',
      [`docs${w}/two.txt`]: 'second file\n',
    });
  }
  const bucket = await seedBucket(client, seeded);
  const browser = await launchChromium();
  const shots = artifactsDir('console');
  return {
    t,
    smtp,
    client,
    browser,
    base,
    token,
    label,
    id,
    bucket,
    call,
    async tab(width, hash) {
      const page = await browser.newPage({ viewport: { width, height: 844 }, acceptDownloads: true });
      // What the page met on its way to the sign-in form, told if the form never shows (seen once in CI
      // on PostgreSQL at 390 px, a 30 s wait for the form, with nothing else to go on).
      const met: string[] = [];
      page.on('console', (m) => met.push(`console ${m.type()}: ${m.text()}`));
      page.on('pageerror', (e) => met.push(`page error: ${e.message}`));
      page.on('requestfailed', (r) => met.push(`failed: ${r.url()} ${r.failure()?.errorText ?? ''}`));
      page.on('response', (r) => {
        if (r.status() >= 400) met.push(`${r.status()}: ${r.url()}`);
      });
      const opened = Date.now();
      await page.goto(`${base}/`);
      try {
        await page.getByLabel('API key').fill(token);
      } catch (err) {
        const body = await page
          .evaluate('document.body?.innerText.slice(0, 400)')
          .catch((e: unknown) => `(unreadable: ${String(e)})`);
        throw new Error(
          `no sign-in form ${Date.now() - opened} ms after opening ${page.url()}; the page says ${JSON.stringify(body)}; ${met.join(' | ') || 'no console message, error or failed request'}`,
          { cause: err },
        );
      }
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Locations' }).waitFor();
      await page.goto(`${base}/${hash}`);
      return page;
    },
    shot: (page, name, width) =>
      page.screenshot({ path: join(shots, `${name}-${width}-${database.name}.png`), fullPage: true }),
    async close() {
      await browser.close();
      await t.close();
      client.destroy();
      await s3.close();
      await smtp.close();
    },
  };
}

/** Presses Tab until `target` has the focus, as a keyboard user would reach it. */
export async function tabTo(page: Page, target: Locator, what: string): Promise<void> {
  for (let i = 0; i < 150; i++) {
    await page.keyboard.press('Tab');
    if (await target.evaluate((el) => el.matches(':focus'))) return;
  }
  throw new Error(`Tab never reached ${what}`);
}
