// The share pages in a real browser (Debian's chromium through playwright-core), on both databases:
// a password link's form refuses a wrong password and downloads the right bytes with the right one; a
// link with a download limit shows its landing page and downloads from its button. Each page is
// checked with axe-core (no serious or critical violation) and kept as a screenshot under
// test-artifacts/share/.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Browser } from 'playwright-core';
import { listen } from '../../src/server.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { artifactsDir, axeViolations, browserSkip, launchChromium } from '../support/browser.js';
import { testDatabases } from '../support/databases.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { type Call, createLocation, newWorkspace, s3Client, seedBucket } from '../support/transfers.js';

const FILE = randomBytes(120_000);
/** A right-to-left override: shown as is, "report\u202Etxt.exe" reads "reportexe.txt". */
const TRICK = 'report\u202Etxt.exe';
const skip = browserSkip();

for (const database of await testDatabases()) {
  describe(`share pages in chromium [${database.name}]`, { skip: skip ?? database.skip ?? false }, () => {
    let t: TestApp;
    let s3: S3rverHandle;
    let client: S3Client;
    let browser: Browser;
    let call: Call;
    let label: string;
    let bucket: string;
    const shots = artifactsDir('share');

    before(async () => {
      s3 = await startS3rver();
      client = s3Client(s3.endpoint);
      t = await startTestApp(database, {
        env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32', FERRY_PORT: '0' },
      });
      // On a port of the system's choice, which the links it makes then name.
      await listen(t.app, t.config);
      browser = await launchChromium();
      call = await newWorkspace(t);
      label = (
        await createLocation(call, {
          provider: 's3',
          secret: { access_key_id: 'AKID', secret_access_key: 'secret' },
          metadata: { endpoint: s3.endpoint },
        })
      ).label;
      bucket = await seedBucket(client, {
        'files/quarterly report.pdf': FILE,
        [`files/${TRICK}`]: FILE,
      });
    });
    after(async () => {
      await browser?.close();
      await t?.close();
      client?.destroy();
      await s3?.close();
    });

    async function share(payload: Record<string, unknown>, name = 'quarterly report.pdf'): Promise<string> {
      const res = await call({
        method: 'POST',
        url: '/share',
        payload: { file: `${label}/${bucket}/files/${name}`, ...payload },
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().url;
    }

    test('a password link: the form, a wrong password shows the error, the right one downloads the file', async () => {
      const url = await share({ password: 'open sesame' });
      const context = await browser.newContext({ acceptDownloads: true, bypassCSP: true });
      try {
        const page = await context.newPage();
        const first = await page.goto(url);
        assert.equal(first?.status(), 200);
        assert.equal(await page.locator('h1').textContent(), 'A file was shared with you');
        assert.match(await page.locator('dl').innerText(), /quarterly report\.pdf[\s\S]*117 KiB[\s\S]*never/);
        await page.screenshot({ path: join(shots, `password-form-${database.name}.png`) });

        await page.getByLabel('Password').fill('wrong');
        const refused = page.waitForResponse((r) => r.request().method() === 'POST');
        await page.getByRole('button', { name: 'Download' }).click();
        assert.equal((await refused).status(), 401);
        assert.equal(await page.getByRole('alert').textContent(), 'That password is not right.');
        await page.screenshot({ path: join(shots, `password-wrong-${database.name}.png`) });
        assert.deepEqual(await axeViolations(page), []);

        await page.getByLabel('Password').fill('open sesame');
        const [download] = await Promise.all([
          page.waitForEvent('download'),
          page.getByRole('button', { name: 'Download' }).click(),
        ]);
        assert.equal(download.suggestedFilename(), 'quarterly report.pdf');
        const saved = await download.path();
        assert.deepEqual(await readFile(saved), FILE);
        // The form, and the earlier refusal, are gone: the page says the download started.
        assert.equal(await page.locator('h1').textContent(), 'Your download is starting');
        assert.equal(await page.getByText('That password is not right.').count(), 0);
        assert.equal(await page.getByLabel('Password').count(), 0);
        for (const width of [1280, 390]) {
          await page.setViewportSize({ width, height: 844 });
          await page.screenshot({ path: join(shots, `password-starting-${width}-${database.name}.png`) });
          assert.deepEqual(await axeViolations(page), []);
        }
      } finally {
        await context.close();
      }
    });

    test('a link with a download limit: the landing page, and its button downloads the file', async () => {
      const url = await share({ max_downloads: 3, expires_at: '2030-01-01T00:00:00Z' });
      const context = await browser.newContext({ acceptDownloads: true, bypassCSP: true });
      try {
        const page = await context.newPage();
        assert.equal((await page.goto(url))?.status(), 200);
        assert.match(await page.locator('main').innerText(), /can be used 3 more times/);
        assert.match(await page.locator('dl').innerText(), /2030/);
        await page.screenshot({ path: join(shots, `landing-${database.name}.png`) });
        assert.deepEqual(await axeViolations(page), []);
        const [download] = await Promise.all([
          page.waitForEvent('download'),
          page.getByRole('button', { name: 'Download' }).click(),
        ]);
        assert.deepEqual(await readFile(await download.path()), FILE);
        const listed = (await call({ method: 'GET', url: '/v1/shares' })).json().shares[0];
        assert.equal(listed.downloads, 1);
      } finally {
        await context.close();
      }
    });

    test('a name with a right-to-left override shows it escaped, at 1280 and 390 px, and downloads without it', async () => {
      const url = await share({ max_downloads: 3 }, TRICK);
      const context = await browser.newContext({ acceptDownloads: true, bypassCSP: true });
      try {
        const page = await context.newPage();
        for (const width of [1280, 390]) {
          await page.setViewportSize({ width, height: 800 });
          assert.equal((await page.goto(url))?.status(), 200);
          const name = await page.locator('dd.name').innerText();
          assert.equal(name, 'report<U+202E>txt.exe');
          assert.equal(await page.title(), 'report<U+202E>txt.exe');
          assert.ok(!(await page.content()).includes('\u202e'), 'no bidi control reaches the page');
          await page.screenshot({ path: join(shots, `bidi-${width}-${database.name}.png`) });
        }
        const [download] = await Promise.all([
          page.waitForEvent('download'),
          page.getByRole('button', { name: 'Download' }).click(),
        ]);
        assert.equal(download.suggestedFilename(), 'reporttxt.exe');
      } finally {
        await context.close();
      }
    });

    test('an unknown link shows the not-found page', async () => {
      const context = await browser.newContext({ bypassCSP: true });
      try {
        const page = await context.newPage();
        const res = await page.goto(`${t.config.publicUrl}/s/${randomBytes(32).toString('base64url')}`);
        assert.equal(res?.status(), 404);
        assert.equal(await page.locator('h1').textContent(), 'Link not found');
        await page.screenshot({ path: join(shots, `not-found-${database.name}.png`) });
        assert.deepEqual(await axeViolations(page), []);
      } finally {
        await context.close();
      }
    });
  });
}
