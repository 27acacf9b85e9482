// The console's Browse page as a file manager, in a real browser (chromium through playwright-core) on
// both databases, against s3rver and a real SMTP server, at 1280 and 390 px: a new folder, three files
// (one of 50 MiB) dropped on it and checked byte for byte in the bucket, one downloaded and compared;
// an upload through the file input and a selection made with the keyboard alone; a filter; two files
// selected and copied (the job awaited through the API); a share with a password, an expiry and a
// download limit, opened with its password; a send with cc, bcc and reply-to, where a second click
// sends nothing; the confirmation before a send is canceled. axe-core in each state; screenshots in
// test-artifacts/console/.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Browser, Locator, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../support/app.js';
import { artifactsDir, axeViolations, browserSkip, launchChromium } from '../support/browser.js';
import { testDatabases } from '../support/databases.js';
import { freePort } from '../support/processes.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { TestSmtp } from '../support/smtp.js';
import {
  type Call,
  createLocation,
  newWorkspace,
  readS3,
  s3Client,
  seedBucket,
  waitFor,
} from '../support/transfers.js';

const skip = browserSkip();

// The console as the source is now, not as some earlier build left it.
const built = spawnSync(process.execPath, [new URL('../../scripts/build-ui.mjs', import.meta.url).pathname], {
  encoding: 'utf8',
});
if (built.status !== 0) throw new Error(`scripts/build-ui.mjs failed: ${built.stderr}`);

const BIG = 50 * 1024 * 1024;

/**
 * `size` bytes of xorshift32 from a fixed seed: the page makes the 50 MiB file with this same function
 * (it is passed to the page as its source), and the test makes it again to compare, so nothing that
 * large is committed or sent to the page.
 */
function pseudoRandom(size: number): Uint8Array {
  const out = new Uint8Array(size);
  let x = 2463534242;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 255;
  }
  return out;
}

/** Presses Tab until `target` has the focus, as a keyboard user would reach it. */
async function tabTo(page: Page, target: Locator, what: string): Promise<void> {
  for (let i = 0; i < 150; i++) {
    await page.keyboard.press('Tab');
    if (await target.evaluate((el) => el.matches(':focus'))) return;
  }
  throw new Error(`Tab never reached ${what}`);
}

for (const database of await testDatabases()) {
  describe(`console files in chromium [${database.name}]`, { skip: skip ?? database.skip ?? false }, () => {
    let t: TestApp;
    let s3: S3rverHandle;
    let smtp: TestSmtp;
    let client: S3Client;
    let browser: Browser;
    let base: string;
    let token: string;
    let label: string;
    let id: string;
    let bucket: string;
    let call: Call;
    const shots = artifactsDir('console');

    before(async () => {
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      s3 = await startS3rver();
      smtp = await new TestSmtp().start();
      client = s3Client(s3.endpoint);
      t = await startTestApp(database, {
        env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32', FERRY_PUBLIC_URL: base, FERRY_SMTP_URL: smtp.url },
        worker: true,
      });
      await t.app.listen({ host: '127.0.0.1', port });
      call = await newWorkspace(t);
      token = (await call({ method: 'POST', url: '/v1/tokens', payload: { name: 'files' } })).json().token;
      ({ id, label } = await createLocation(call, {
        provider: 's3',
        secret: { access_key_id: 'AKID', secret_access_key: 'secret' },
        metadata: { endpoint: s3.endpoint },
      }));
      // Each test's own folder: sel<width> for the selection, docs<width> for share and send.
      const seeded: Record<string, string> = { 'seed.txt': 'seed' };
      for (const w of [1280, 390]) {
        Object.assign(seeded, {
          [`sel${w}/one.txt`]: 'first file\n',
          [`sel${w}/two.txt`]: 'second file\n',
          [`sel${w}/pic.bin`]: 'not text',
          [`docs${w}/one.txt`]: 'first file\n',
          [`docs${w}/two.txt`]: 'second file\n',
        });
      }
      bucket = await seedBucket(client, seeded);
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      await t?.close();
      client?.destroy();
      await s3?.close();
      await smtp?.close();
    });

    /** A signed-in tab at `width` px, at `hash`. */
    async function tab(width: number, hash: string): Promise<Page> {
      const page = await browser.newPage({ viewport: { width, height: 844 }, acceptDownloads: true });
      await page.goto(`${base}/`);
      await page.getByLabel('API key').fill(token);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Locations' }).waitFor();
      await page.goto(`${base}/${hash}`);
      return page;
    }
    const shot = (page: Page, name: string, width: number) =>
      page.screenshot({ path: join(shots, `${name}-${width}-${database.name}.png`), fullPage: true });

    for (const width of [1280, 390]) {
      const folder = `up${width}`;

      test(`at ${width} px, a new folder takes three dropped files (one of 50 MiB) with progress, byte for byte; one downloads whole`, async () => {
        const page = await tab(width, `#browse/${id}/${bucket}`);
        try {
          await page.getByText('seed.txt', { exact: true }).waitFor();
          await page.getByRole('button', { name: 'New folder' }).click();
          await page.getByLabel('Folder name').fill(folder);
          await page.getByRole('button', { name: 'Open new folder' }).click();
          await page.getByText('This folder is new and empty').waitFor();
          assert.deepEqual(await axeViolations(page), []);

          // Made in the page by an expression the test writes (evaluated through the DevTools protocol,
          // which the console's Content-Security-Policy does not govern).
          const dropped = await page.evaluateHandle(`(() => {
            const dt = new DataTransfer();
            dt.items.add(new File([(${pseudoRandom.toString()})(${BIG})], 'big.bin', { type: 'application/octet-stream' }));
            dt.items.add(new File(['first file\\n'], 'one.txt', { type: 'text/plain' }));
            dt.items.add(new File(['second file\\n'], 'two.txt', { type: 'text/plain' }));
            return dt;
          })()`);
          const listing = page.locator('section.browse');
          await listing.dispatchEvent('dragover', { dataTransfer: dropped });
          await listing.dispatchEvent('drop', { dataTransfer: dropped });
          const big = page.getByRole('progressbar', { name: 'Upload of big.bin' });
          await big.waitFor();
          await shot(page, 'upload', width);
          for (const name of ['big.bin', 'one.txt', 'two.txt'])
            await page
              .getByRole('progressbar', { name: `Upload of ${name}` })
              .and(page.locator('[aria-valuetext^="done"]'))
              .waitFor({ timeout: 120_000 });
          assert.equal(await big.getAttribute('value'), '100');
          // The listing was loaded again: the files are rows now, with their sizes.
          await page
            .getByRole('row', { name: /big\.bin/ })
            .getByText('50 MiB')
            .waitFor();
          await shot(page, 'uploaded', width);
          assert.deepEqual(await axeViolations(page), []);
          const stored = await readS3(client, bucket, `${folder}/big.bin`);
          assert.equal(stored?.length, BIG);
          assert.ok(stored?.equals(pseudoRandom(BIG)), 'the 50 MiB file is stored byte for byte');
          assert.equal(String(await readS3(client, bucket, `${folder}/one.txt`)), 'first file\n');
          assert.equal(String(await readS3(client, bucket, `${folder}/two.txt`)), 'second file\n');

          const downloading = page.waitForEvent('download');
          await page.getByRole('button', { name: 'Download big.bin' }).click();
          const download = await downloading;
          assert.equal(download.suggestedFilename(), 'big.bin');
          const saved = readFileSync((await download.path()) as string);
          assert.ok(saved.equals(stored as Buffer), 'the download has the bytes of the bucket');
          await page
            .getByRole('progressbar', { name: 'Download of big.bin' })
            .and(page.locator('[aria-valuetext^="done"]'))
            .waitFor();
          assert.deepEqual(await axeViolations(page), []);
        } finally {
          await page.close();
        }
      });

      test(`at ${width} px, with the keyboard alone: upload through the file input, filter, select two files and copy them`, async () => {
        const page = await tab(width, `#browse/${id}/${bucket}/sel${width}`);
        try {
          await page.getByRole('row', { name: /one\.txt/ }).waitFor();
          const input = page.getByLabel('Upload files');
          await tabTo(page, input, 'the file input');
          const choosing = page.waitForEvent('filechooser');
          await page.keyboard.press('Space');
          await (await choosing).setFiles([
            { name: 'keyed.txt', mimeType: 'text/plain', buffer: Buffer.from('typed by keyboard\n') },
          ]);
          await page.getByRole('row', { name: /keyed\.txt/ }).waitFor();
          assert.equal(String(await readS3(client, bucket, `sel${width}/keyed.txt`)), 'typed by keyboard\n');

          await tabTo(page, page.getByLabel('Filter by name'), 'the filter');
          await page.keyboard.type('.TXT');
          await page.getByText('3 of 4 entries match.').waitFor();
          assert.equal(await page.getByRole('row', { name: /pic\.bin/ }).count(), 0);
          await tabTo(page, page.getByLabel('Select one.txt'), 'the checkbox of one.txt');
          await page.keyboard.press('Space');
          await tabTo(page, page.getByLabel('Select two.txt'), 'the checkbox of two.txt');
          await page.keyboard.press('Space');
          await page.getByText('2 entries selected').waitFor();
          await shot(page, 'selection', width);
          assert.deepEqual(await axeViolations(page), []);

          await tabTo(page, page.getByRole('button', { name: 'Copy selected' }), 'Copy selected');
          await page.keyboard.press('Enter');
          const dest = page.getByLabel('Destination folder');
          await tabTo(page, dest, 'the destination folder');
          await page.keyboard.press('Control+a');
          await page.keyboard.type(`${bucket}/copied${width}/`);
          await page.keyboard.press('Enter');
          const started = await page.getByText(/Copy started \(job [0-9a-f-]{36}\)/).innerText();
          const job = /job ([0-9a-f-]{36})/.exec(started)?.[1];
          assert.equal((await waitFor(call, `/v1/jobs/${job}`)).status, 'complete');
          assert.equal(String(await readS3(client, bucket, `copied${width}/one.txt`)), 'first file\n');
          assert.equal(String(await readS3(client, bucket, `copied${width}/two.txt`)), 'second file\n');
          assert.equal(await readS3(client, bucket, `copied${width}/keyed.txt`), undefined, 'not selected');
          assert.deepEqual(await axeViolations(page), []);
        } finally {
          await page.close();
        }
      });

      test(`at ${width} px, a share with a password, an expiry and a download limit; its link asks the password and serves the file`, async () => {
        const page = await tab(width, `#browse/${id}/${bucket}/docs${width}`);
        try {
          await page.getByRole('button', { name: 'Share one.txt', exact: true }).click();
          const password = `secret ${width}`;
          await page.getByLabel('Password (optional)').fill(password);
          const tomorrow = new Date(Date.now() + 86_400_000);
          const local = new Date(tomorrow.getTime() - tomorrow.getTimezoneOffset() * 60_000)
            .toISOString()
            .slice(0, 16);
          await page.getByLabel('Expires (optional)').fill(local);
          await page.getByLabel('Download limit (optional)').fill('3');
          await shot(page, 'share-options', width);
          assert.deepEqual(await axeViolations(page), []);
          await page.getByRole('button', { name: 'Create link', exact: true }).click();
          const link = await page.getByLabel('Share link').inputValue();
          assert.match(link, new RegExp(`^${base}/s/[A-Za-z0-9_-]{40,}$`));
          assert.deepEqual(await axeViolations(page), []);
          const listed = (await call({ method: 'GET', url: '/v1/shares' })).json().shares as Array<
            Record<string, unknown>
          >;
          const made = listed.find((s) => s.source === `${label}/${bucket}/docs${width}/one.txt`);
          assert.equal(made?.has_password, true);
          assert.equal(made?.max_downloads, 3);
          assert.equal(Date.parse(String(made?.expires_at)), Date.parse(`${local}:00`));

          const opened = await browser.newPage({ viewport: { width, height: 844 }, acceptDownloads: true });
          try {
            await opened.goto(link);
            await opened.getByLabel('Password').fill(password);
            const downloading = opened.waitForEvent('download');
            await opened.getByRole('button', { name: 'Download' }).click();
            const download = await downloading;
            assert.equal(download.suggestedFilename(), 'one.txt');
            assert.equal(readFileSync((await download.path()) as string, 'utf8'), 'first file\n');
          } finally {
            await opened.close();
          }
        } finally {
          await page.close();
        }
      });

      test(`at ${width} px, a send of a file picked in Browse, with cc, bcc, reply-to and a password, goes once however often Send is clicked; a cancel asks first`, async () => {
        const page = await tab(width, `#browse/${id}/${bucket}/docs${width}`);
        const to = `ann${width}@example.com`;
        try {
          await page.getByRole('button', { name: 'Send two.txt', exact: true }).click();
          await page.getByLabel('To (comma-separated)').fill(`${to}, bob${width}@example.com`);
          await page.getByLabel('Cc', { exact: true }).fill(`cy${width}@example.com`);
          await page.getByLabel('Bcc', { exact: true }).fill(`dee${width}@example.com`);
          await page.getByLabel('Reply-to').fill(`me${width}@example.com`);
          await page.getByLabel('Your name').fill('Pat');
          await page.getByLabel('Message').fill('The file you asked for');
          await page.getByLabel('Link password').fill(`pw-${width}`);
          await shot(page, 'send-form', width);
          assert.deepEqual(await axeViolations(page), []);
          const send = page.getByRole('button', { name: 'Send', exact: true });
          await send.dblclick();
          await page.getByText('Send queued').waitFor();
          // The form is empty again: one more click asks for recipients rather than sending.
          assert.equal(await page.getByLabel('To (comma-separated)').inputValue(), '');
          await send.click();
          const mail = await smtp.message((m) => m.envelope.to.includes(to));
          assert.match(String(mail.mail.subject), /Pat shared "two\.txt" with you/);
          assert.equal(mail.mail.replyTo?.text, `me${width}@example.com`);
          assert.match(String(mail.mail.cc && JSON.stringify(mail.mail.cc)), new RegExp(`cy${width}@`));
          assert.ok(mail.envelope.to.includes(`dee${width}@example.com`), 'bcc by envelope');
          assert.doesNotMatch(mail.raw, new RegExp(`pw-${width}`), 'never the password');
          const sends = (await call({ method: 'GET', url: '/v1/sends?limit=100' })).json().sends as Array<
            Record<string, unknown>
          >;
          assert.equal(sends.filter((s) => s.source === `${label}/${bucket}/docs${width}/two.txt`).length, 1);
          assert.equal(smtp.received.filter((m) => m.envelope.to.includes(to)).length, 1);

          // A send for later, from the Sends page, and its cancel: asked first, kept, then canceled.
          await page.goto(`${base}/#sends`);
          await page.getByLabel('File (location/path)').fill(`${label}/${bucket}/docs${width}/one.txt`);
          await page.getByLabel('To (comma-separated)').fill(`later${width}@example.com`);
          await page.getByLabel(/^When/).fill('in 2 days');
          await page.getByRole('button', { name: 'Send', exact: true }).click();
          await page.getByText('Send scheduled for').waitFor();
          const scheduled = (
            (await call({ method: 'GET', url: '/v1/sends?limit=1' })).json().sends as Array<{ id: string }>
          )[0]?.id as string;
          const row = page.getByRole('row', { name: new RegExp(scheduled) });
          await row.getByRole('button', { name: `Cancel send ${scheduled}` }).click();
          await row.getByText('Cancel this send?').waitFor();
          await shot(page, 'send-cancel-confirm', width);
          assert.deepEqual(await axeViolations(page), []);
          await row.getByRole('button', { name: `Keep send ${scheduled}` }).click();
          assert.equal(
            (await call({ method: 'GET', url: `/v1/sends/${scheduled}` })).json().status,
            'scheduled',
          );
          await row.getByRole('button', { name: `Cancel send ${scheduled}` }).click();
          await row.getByRole('button', { name: `Yes, cancel send ${scheduled}` }).click();
          await row.getByText('canceled', { exact: true }).waitFor();
          assert.equal(
            (await call({ method: 'GET', url: `/v1/sends/${scheduled}` })).json().status,
            'canceled',
          );
          assert.deepEqual(await axeViolations(page), []);
        } finally {
          await page.close();
        }
      });
    }
  });
}
