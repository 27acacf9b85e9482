// The web console in a real browser (Debian's chromium through playwright-core) on both databases,
// against s3rver: sign in, browse a bucket, start a bulk copy and watch its bar reach 100% from the
// event stream, a copy with a failed object retried once the object exists, a share created and
// revoked, a remove previewed and confirmed. Each page is checked with axe-core (no serious or
// critical violation) and kept as a screenshot under test-artifacts/console/. The page's
// Content-Security-Policy, that it asks nothing of another origin, and the size of its script.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Browser, Page, Request } from 'playwright-core';
import { CONSOLE_DIR } from '../../src/http/routes/console.js';
import { listen } from '../../src/server.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { artifactsDir, axeViolations, browserSkip, launchChromium, widthsOn } from '../support/browser.js';
import { buildConsole } from '../support/console-build.js';
import { testDatabases } from '../support/databases.js';
import { deferred } from '../support/deferred.js';
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
import { waitUntil } from '../support/wait.js';

const skip = browserSkip();

// The console as the source is now, not as some earlier build left it.
buildConsole();

test('the first load is under 100 KiB of script, gzipped', () => {
  const gz = readdirSync(CONSOLE_DIR).filter((f) => f.endsWith('.js.gz'));
  assert.ok(gz.length > 0);
  const total = gz.reduce((n, f) => n + readFileSync(join(CONSOLE_DIR, f)).length, 0);
  assert.ok(total < 100 * 1024, `${total} bytes of gzipped script`);
});

for (const database of await testDatabases()) {
  // One width on each database, both widths in all (test/support/browser.ts, widthsOn).
  const widths = await widthsOn(database);
  describe(`web console in chromium [${database.name}]`, { skip: skip ?? database.skip ?? false }, () => {
    let t: TestApp;
    let s3: S3rverHandle;
    let smtp: TestSmtp;
    let client: S3Client;
    let browser: Browser;
    let page: Page;
    let base: string;
    let token: string;
    let label: string;
    let id: string;
    let bucket: string;
    let call: Call;
    const requests: string[] = [];
    const shots = artifactsDir('console');
    const shot = (name: string) =>
      page.screenshot({ path: join(shots, `${name}-${database.name}.png`), fullPage: true });

    before(async () => {
      s3 = await startS3rver();
      smtp = await new TestSmtp().start();
      client = s3Client(s3.endpoint);
      t = await startTestApp(database, {
        env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32', FERRY_PORT: '0', FERRY_SMTP_URL: smtp.url },
        worker: true,
      });
      // On a port of the system's choice, which the links it makes then name.
      base = await listen(t.app, t.config);
      call = await newWorkspace(t);
      const key = await call({ method: 'POST', url: '/v1/tokens', payload: { name: 'console' } });
      token = key.json().token;
      ({ id, label } = await createLocation(call, {
        provider: 's3',
        secret: { access_key_id: 'AKID', secret_access_key: 'secret' },
        metadata: { endpoint: s3.endpoint },
      }));
      const objects: Record<string, string> = {};
      for (let i = 0; i < 6; i++) objects[`in/k${i}.txt`] = `object ${i} `.repeat(2000);
      bucket = await seedBucket(client, objects);
      browser = await launchChromium();
      page = await browser.newPage();
      page.on('request', (r) => requests.push(r.url()));
      page.on('dialog', (d) => void d.accept());
    });
    after(async () => {
      await browser?.close();
      await t?.close();
      client?.destroy();
      await s3?.close();
      await smtp?.close();
    });

    test('the page has a strict Content-Security-Policy and asks nothing of another origin', async () => {
      const res = await page.goto(`${base}/`);
      assert.equal(res?.status(), 200);
      const csp = res?.headers()['content-security-policy'] ?? '';
      assert.match(csp, /default-src 'self'/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
      await page.getByLabel('API key').waitFor();
      await shot('signin');
      assert.deepEqual(await axeViolations(page), []);
    });

    test('sign in, see the locations, browse a bucket', async () => {
      await page.getByLabel('API key').fill('fry_wrong');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').filter({ hasText: 'API key was refused' }).waitFor();
      await page.getByLabel('API key').fill(token);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Locations' }).waitFor();
      await page
        .getByRole('row', { name: new RegExp(label) })
        .getByText('active')
        .waitFor();
      // An s3 location has static keys: nothing to refresh, so no Refresh button.
      assert.equal(await page.getByRole('button', { name: `Refresh ${label}` }).count(), 0);
      await shot('locations');
      assert.deepEqual(await axeViolations(page), []);
      await page.getByRole('link', { name: label }).click();
      await page.getByRole('link', { name: `${bucket}/` }).click();
      await page.getByRole('link', { name: 'in/' }).waitFor();
      await page.getByRole('link', { name: 'in/' }).click();
      await page
        .getByRole('row', { name: /k5\.txt/ })
        .getByText('18 KiB')
        .waitFor();
      await shot('browser');
      assert.deepEqual(await axeViolations(page), []);
    });

    test('a bulk copy started from the browser reaches 100% on the activity page', async () => {
      await page.goto(`${base}/#browse/${id}/${bucket}`);
      await page.getByRole('button', { name: 'Copy in', exact: true }).click();
      await page.getByLabel('Destination path').fill(`${bucket}/out/`);
      await page.getByLabel('Objects already there').selectOption('if-missing');
      await page.getByRole('button', { name: 'Start copy' }).click();
      await page.getByRole('link', { name: 'See progress' }).click();
      const job = page
        .locator('li.job')
        .filter({ hasText: `${label}:${bucket}/in/ → ${label}:${bucket}/out/` });
      await job.getByText('complete', { exact: true }).waitFor();
      assert.equal(await job.getByRole('progressbar').getAttribute('value'), '100');
      assert.equal(await job.locator('.bar').getAttribute('class'), 'bar');
      assert.match(
        await job.innerText(),
        /6 of 6 objects \(6 copied, 0 skipped, 0 failed\) · proven by checksum/,
      );
      // Its report, as CSV (docs/api.md, "Reports"): a header row and each object copied.
      const downloading = page.waitForEvent('download');
      await job.getByRole('button', { name: /^Download report/ }).click();
      const download = await downloading;
      assert.match(download.suggestedFilename(), /^job-[0-9a-f-]{36}-report\.csv$/);
      const rows = readFileSync((await download.path()) as string, 'utf8')
        .trimEnd()
        .split('\r\n');
      assert.equal(
        rows[0],
        'key,outcome,size,bytes,attempts,error,reason,source_hash,destination_hash,verified,verified_by',
      );
      assert.equal(rows.length, 7, rows.join('\n'));
      // Each proven by the MD5 s3rver answers for what it received (docs/api.md, "Verification").
      for (const row of rows.slice(1)) assert.match(row, /^k\d\.txt,copied,\d+,\d+,1,.*,checksum,md5$/);
      await shot('activity');
      assert.deepEqual(await axeViolations(page), []);
      assert.equal((await readS3(client, bucket, 'out/k3.txt'))?.toString(), 'object 3 '.repeat(2000));
    });

    test('a copy with a failed object shows the failure and succeeds once retried', async () => {
      await page.goto(`${base}/#browse/${id}/${bucket}`);
      await page.getByRole('button', { name: 'Copy in', exact: true }).click();
      await page.getByLabel('Destination path').fill(`${bucket}/again/`);
      await page.getByLabel(/Manifest/).setInputFiles({
        name: 'keys.txt',
        mimeType: 'text/plain',
        buffer: Buffer.from('k0.txt\nlate.txt\n'),
      });
      await page.getByText('2 keys from the manifest.').waitFor();
      await page.getByRole('button', { name: 'Start copy' }).click();
      await page.getByRole('link', { name: 'See progress' }).click();
      const job = page
        .locator('li.job')
        .filter({ hasText: `${label}:${bucket}/in/ → ${label}:${bucket}/again/` });
      await job.getByText('partial', { exact: true }).waitFor();
      // Not a plain full bar: the partial tone and the count of failures beside it.
      await job.locator('.bar.partial').getByText('100% · 1 failed').waitFor();
      await job.getByRole('button', { name: 'Show 1 failure' }).click();
      await job.getByRole('row', { name: /late\.txt/ }).waitFor();
      await shot('failure');
      assert.deepEqual(await axeViolations(page), []);
      // The object arrives; the retry copies it.
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'in/late.txt', Body: 'late' }));
      await job.getByRole('button', { name: 'Retry failed objects' }).click();
      await job.getByText('complete', { exact: true }).waitFor();
      assert.equal(await job.getByRole('progressbar').getAttribute('value'), '100');
      assert.equal(await job.locator('.bar').getAttribute('class'), 'bar');
      assert.equal((await readS3(client, bucket, 'again/late.txt'))?.toString(), 'late');
    });

    test('a share made from the browser shows its link once, and is revoked from the shares page', async () => {
      await page.goto(`${base}/#browse/${id}/${bucket}/in`);
      await page.getByRole('button', { name: 'Share k2.txt' }).click();
      await page.getByRole('button', { name: 'Create link' }).click();
      const link = await page.getByLabel('Share link').inputValue();
      assert.match(link, new RegExp(`^${base}/s/[A-Za-z0-9_-]{40,}$`));
      await shot('share-created');
      const once = await fetch(`${base}/share`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ file: `${label}/${bucket}/in/k5.txt`, max_downloads: 1 }),
      });
      assert.equal(once.status, 201);
      const onceUrl = new URL(((await once.json()) as { url: string }).url).pathname;
      assert.equal((await fetch(`${base}${onceUrl}`, { method: 'POST' })).status, 200);
      await page.getByRole('link', { name: 'Shares' }).click();
      const row = page.getByRole('row', { name: new RegExp(`${bucket}/in/k2\\.txt`) });
      await row.getByText('active').waitFor();
      const usedUp = page.getByRole('row', { name: new RegExp(`${bucket}/in/k5\\.txt`) });
      await usedUp.getByText('used up').waitFor();
      assert.equal(await usedUp.getByText('active').count(), 0, 'a used-up link is not active');
      assert.equal(
        await usedUp.getByRole('button', { name: /Revoke/ }).count(),
        1,
        'it can still be revoked',
      );
      await shot('shares');
      assert.deepEqual(await axeViolations(page), []);
      await row.getByRole('button', { name: /Revoke/ }).click();
      await row.getByText('revoked').waitFor();
      assert.equal((await fetch(link)).status, 404);
    });

    test('a remove shows its preview first and removes on confirm', async () => {
      await page.goto(`${base}/#browse/${id}/${bucket}/in`);
      await page.getByRole('button', { name: 'Remove k4.txt' }).click();
      await page.getByRole('button', { name: 'Preview removal' }).click();
      await page.getByText('This entry would be removed').waitFor();
      assert.ok(await readS3(client, bucket, 'in/k4.txt'), 'nothing is removed by the preview');
      await shot('remove-preview');
      assert.deepEqual(await axeViolations(page), []);
      await page.getByRole('button', { name: 'Remove 1 entry' }).click();
      await page.getByText('Removal started').waitFor();
      await page.getByRole('link', { name: 'See progress' }).click();
      await page
        .locator('li.job')
        .filter({ hasText: 'remove' })
        .getByText('complete', { exact: true })
        .waitFor();
      assert.equal(await readS3(client, bucket, 'in/k4.txt'), undefined);
    });

    test('a folder left while its listing is slow: the next folder shows its own files, never the late answer', async () => {
      for (const [key, body] of Object.entries({ 'slow/old.txt': 'old', 'fast/new.txt': 'new' })) {
        await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
      }
      // The network, not ferry, is slow here: the browser holds the answer for the first folder until
      // the next folder is shown, so that it certainly comes late.
      let slow: Request | undefined;
      const released = deferred();
      await page.route('**/v1/list', async (route) => {
        const body = route.request().postDataJSON() as { path?: string };
        if (body.path === `${bucket}/slow`) {
          slow = route.request();
          await released.promise;
        }
        await route.continue();
      });
      try {
        await page.goto(`${base}/#browse/${id}/${bucket}/slow`);
        const held = await waitUntil(() => slow, { what: 'the slow listing requested' });
        await page.goto(`${base}/#browse/${id}/${bucket}/fast`);
        await page.getByRole('button', { name: 'Share new.txt', exact: true }).waitFor();
        released.resolve();
        // The late answer reaches the page (its whole body: the network events come from the page's
        // own process, as it takes the bytes in); one more task of the page's comes after those that
        // handle it.
        await (await held.response())?.finished();
        await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 0)));
        assert.equal(await page.getByRole('button', { name: 'Share new.txt', exact: true }).count(), 1);
        assert.equal(await page.getByText('old.txt').count(), 0, 'the late answer for slow/ is not shown');
      } finally {
        released.resolve();
        await page.unroute('**/v1/list');
      }
    });

    for (const width of widths) {
      test(`at ${width} px, share, move (previewed) and remove on [ab].txt touch that one file, not a.txt and b.txt`, async () => {
        const dir = `ex${width}`;
        const spaced = '  two  spaces.txt';
        for (const [name, body] of Object.entries({
          '[ab].txt': 'AB',
          'a.txt': 'A',
          'b.txt': 'B',
          [spaced]: 'S',
        })) {
          await client.send(new PutObjectCommand({ Bucket: bucket, Key: `${dir}/${name}`, Body: body }));
        }
        await page.setViewportSize({ width, height: 844 });
        try {
          // An address typed with a final slash is the same folder (not "…/ex1280//").
          await page.goto(`${base}/#browse/${id}/${bucket}/${dir}/`);
          await page.getByText(`drop files on this page to upload them into ${bucket}/${dir}/.`).waitFor();
          // A name keeps its spaces as stored: "  two  spaces.txt" is not shown as "two spaces.txt".
          const spacedRow = page.getByRole('row', { name: /two\s+spaces\.txt/ });
          assert.equal(await spacedRow.getByRole('rowheader').innerText(), spaced);
          await page.getByRole('button', { name: 'Share [ab].txt', exact: true }).click();
          await page.getByRole('button', { name: 'Create link', exact: true }).click();
          await page
            .getByLabel('Share link')
            .or(page.getByRole('alert').filter({ hasText: /\S/ }))
            .first()
            .waitFor();
          assert.ok(
            await page.getByLabel('Share link').isVisible(),
            await page.getByRole('alert').allInnerTexts().then(String),
          );
          await page.getByRole('button', { name: 'Close', exact: true }).click();

          await page.getByRole('button', { name: 'Move [ab].txt', exact: true }).click();
          // A move proposes no place and keeps the name (no ".copy"): the folder is chosen.
          assert.equal(await page.getByLabel('Destination folder').inputValue(), '');
          assert.equal(await page.getByLabel('Name there').inputValue(), '[ab].txt');
          await page.getByLabel('Destination folder').fill(`${bucket}/${dir}/out`);
          await page.getByRole('button', { name: 'Preview move', exact: true }).click();
          await page.getByText('This entry would be moved').waitFor();
          assert.ok(await readS3(client, bucket, `${dir}/[ab].txt`), 'nothing is moved by the preview');
          await shot(`move-preview-${width}`);
          assert.deepEqual(await axeViolations(page), []);
          await page.getByRole('button', { name: 'Move 1 entry', exact: true }).click();
          await page.getByText('Move started').waitFor();
          await waitUntil(
            async () => ((await readS3(client, bucket, `${dir}/[ab].txt`)) === undefined ? true : undefined),
            { what: 'the move of [ab].txt (its source gone)' },
          );
          assert.equal(String(await readS3(client, bucket, `${dir}/out/[ab].txt`)), 'AB');
          await page.getByRole('button', { name: 'Close', exact: true }).click();

          await page.goto(`${base}/#browse/${id}/${bucket}/${dir}/out`);
          await page.getByRole('button', { name: 'Remove [ab].txt', exact: true }).click();
          await page.getByRole('button', { name: 'Preview removal', exact: true }).click();
          await page.getByText('This entry would be removed').waitFor();
          await page.getByRole('button', { name: 'Remove 1 entry', exact: true }).click();
          await page.getByText('Removal started').waitFor();
          await waitUntil(
            async () =>
              (await readS3(client, bucket, `${dir}/out/[ab].txt`)) === undefined ? true : undefined,
            { what: 'the removal of [ab].txt' },
          );
          assert.equal(String(await readS3(client, bucket, `${dir}/a.txt`)), 'A');
          assert.equal(String(await readS3(client, bucket, `${dir}/b.txt`)), 'B');
          assert.equal(await readS3(client, bucket, `${dir}/out/a.txt`), undefined);
        } finally {
          await page.setViewportSize({ width: 1280, height: 720 });
        }
      });
    }

    test('the keys and sends pages, and no request left this origin', async () => {
      await page.getByRole('link', { name: 'API keys' }).click();
      await page.getByRole('row', { name: /console/ }).waitFor();
      await shot('keys');
      assert.deepEqual(await axeViolations(page), []);
      await page.getByRole('link', { name: 'Sends' }).click();
      await page.getByRole('heading', { name: 'Sends' }).waitFor();
      // A send for later, made here; then the page again, which lists it from GET /v1/sends.
      await page.getByLabel('File (location/path)').fill(`${label}/${bucket}/in/k0.txt`);
      await page.getByLabel('To (comma-separated)').fill('later@example.com');
      await page.getByLabel(/^When/).fill('in 2 days');
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      await page.getByRole('cell').getByText('scheduled', { exact: true }).first().waitFor();
      // Made an hour ago, as far as the event stream can tell (it sends only what changed lately), and
      // a new page load forgets what this tab saw: the row can now come only from the list.
      const hourAgo = Date.now() - 3_600_000;
      await t.services.db.kysely
        .updateTable('sends')
        .set({ created_at: hourAgo, updated_at: hourAgo })
        .where('recipients', 'like', '%later@example.com%')
        .execute();
      await page.reload();
      await page.getByRole('link', { name: 'Sends' }).click();
      await page.getByRole('cell').getByText('scheduled', { exact: true }).first().waitFor();
      await shot('sends');
      assert.deepEqual(await axeViolations(page), []);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('API key').waitFor();
      assert.equal(await page.evaluate('sessionStorage.length'), 0);
      const foreign = requests.filter((u) => !u.startsWith(`${base}/`));
      assert.deepEqual(foreign, []);
    });

    for (const width of widths) {
      test(`at ${width} px, the sends page shows each send's file and recipients and cancels a scheduled one; the shares page says a link is used up`, async () => {
        const made = await call({
          method: 'POST',
          url: '/send',
          payload: {
            source: `${label}/${bucket}/in/k1.txt`,
            to: ['ann@example.com', 'bob@example.com'],
            cc: 'cy@example.com',
            scheduledAt: 'in 3 days',
          },
        });
        assert.equal(made.statusCode, 202, made.body);
        const sendId: string = made.json().id;
        const shared = await call({
          method: 'POST',
          url: '/share',
          payload: { file: `${label}/${bucket}/in/k5.txt`, max_downloads: 1 },
        });
        assert.equal(shared.statusCode, 201, shared.body);
        const download = await fetch(shared.json().url, { method: 'POST' });
        assert.equal(download.status, 200);
        await download.arrayBuffer();
        const tab = await browser.newPage({ viewport: { width, height: 844 } });
        try {
          await tab.goto(`${base}/`);
          await tab.getByLabel('API key').fill(token);
          await tab.getByRole('button', { name: 'Sign in' }).click();
          await tab.getByRole('heading', { name: 'Locations' }).waitFor();
          await tab.goto(`${base}/#sends`);
          const row = tab.getByRole('row', { name: new RegExp(sendId) });
          await row.getByRole('cell', { name: `${label}/${bucket}/in/k1.txt`, exact: true }).waitFor();
          assert.equal(await row.getByRole('cell', { name: '3', exact: true }).count(), 1, 'recipients');
          await tab.screenshot({ path: join(shots, `sends-${width}-${database.name}.png`), fullPage: true });
          assert.deepEqual(await axeViolations(tab), []);
          await row.getByRole('button', { name: `Cancel send ${sendId}` }).click();
          // Canceling asks first (docs/console.md, "Sends").
          await row.getByRole('button', { name: `Yes, cancel send ${sendId}` }).click();
          await row.getByText('canceled', { exact: true }).waitFor();
          assert.equal(await row.getByRole('button', { name: /Cancel/ }).count(), 0);
          assert.equal((await call({ method: 'GET', url: `/v1/sends/${sendId}` })).json().status, 'canceled');
          await tab.goto(`${base}/#shares`);
          const link = tab.getByRole('row', { name: new RegExp(`${bucket}/in/k5\\.txt`) }).first();
          await link.getByText('used up').waitFor();
          assert.doesNotMatch(await link.innerText(), /active/);
          await tab.screenshot({ path: join(shots, `shares-${width}-${database.name}.png`), fullPage: true });
        } finally {
          await tab.close();
        }
      });

      test(`at ${width} px, a share page's password form: a wrong password says so; after the right one the file downloads and the page no longer says the password is not right`, async () => {
        const password = `pw-${width}`;
        const shared = await call({
          method: 'POST',
          url: '/share',
          payload: { file: `${label}/${bucket}/in/k2.txt`, password },
        });
        assert.equal(shared.statusCode, 201, shared.body);
        const tab = await browser.newPage({ viewport: { width, height: 844 }, acceptDownloads: true });
        try {
          await tab.goto(shared.json().url);
          await tab.getByLabel('Password').fill('not it');
          await tab.getByRole('button', { name: 'Download' }).click();
          const wrong = tab.getByText('That password is not right.');
          await wrong.waitFor();
          const downloading = tab.waitForEvent('download');
          await tab.getByLabel('Password').fill(password);
          await tab.getByRole('button', { name: 'Download' }).click();
          const download = await downloading;
          assert.equal(download.suggestedFilename(), 'k2.txt');
          assert.equal(await wrong.isVisible(), false, 'the stale message is gone');
          assert.equal(await tab.getByRole('alert').count(), 0);
          await tab.screenshot({
            path: join(shots, `share-password-${width}-${database.name}.png`),
            fullPage: true,
          });
        } finally {
          await tab.close();
        }
      });

      test(`at ${width} px, a bucket store's top level offers New bucket: a refused name shows the rule, a good one lists`, async () => {
        const tab = await browser.newPage({ viewport: { width, height: 844 } });
        try {
          await tab.goto(`${base}/`);
          await tab.getByLabel('API key').fill(token);
          await tab.getByRole('button', { name: 'Sign in' }).click();
          await tab.getByRole('heading', { name: 'Locations' }).waitFor();
          await tab.goto(`${base}/#browse/${id}`);
          await tab.getByRole('link', { name: `${bucket}/` }).waitFor();
          await tab.getByRole('button', { name: 'New bucket' }).click();
          await tab.getByLabel('Bucket name').fill('Not_Allowed');
          await tab.getByRole('button', { name: 'Create bucket' }).click();
          await tab
            .getByRole('alert')
            .filter({ hasText: 'bucket names hold only lower-case letters, digits, dots and hyphens' })
            .waitFor();
          const made = `console-${width}-${database.name}-${Date.now().toString(36)}`;
          await tab.getByLabel('Bucket name').fill(made);
          await tab.getByRole('button', { name: 'Create bucket' }).click();
          await tab.getByText(`Bucket ${made} created.`).waitFor();
          await tab.getByRole('link', { name: `${made}/` }).waitFor();
          await tab.screenshot({
            path: join(shots, `new-bucket-${width}-${database.name}.png`),
            fullPage: true,
          });
          assert.deepEqual(await axeViolations(tab), []);
          // Inside a bucket there is no New bucket.
          await tab.getByRole('link', { name: `${made}/` }).click();
          await tab.getByText('nothing here').or(tab.getByRole('table')).first().waitFor();
          assert.equal(await tab.getByRole('button', { name: 'New bucket' }).count(), 0);
        } finally {
          await tab.close();
        }
      });

      test(`at ${width} px, a transfer over several objects shows from → to, its counts, a red bar and its failures`, async () => {
        const call = await newWorkspace(t);
        const made = await call({
          method: 'POST',
          url: '/v1/tokens',
          payload: { name: `activity ${width}` },
        });
        const loc = await createLocation(call, {
          provider: 's3',
          secret: { access_key_id: 'AKID', secret_access_key: 'secret' },
          metadata: { endpoint: s3.endpoint },
        });
        const b = await seedBucket(client, { 'tmp/a.tmp': 'aaaa' });
        const res = await call({
          method: 'POST',
          url: '/remove',
          payload: { path: [`${loc.label}/${b}/tmp/*.tmp`, `${loc.label}/${b}/tmp/gone.tmp`] },
        });
        assert.equal(res.statusCode, 202, res.body);
        assert.equal((await waitFor(call, `/v1/transfers/${res.json().id}`)).status, 'failed');
        const tab = await browser.newPage({ viewport: { width, height: 844 } });
        try {
          await tab.goto(`${base}/`);
          await tab.getByLabel('API key').fill(made.json().token);
          await tab.getByRole('button', { name: 'Sign in' }).click();
          await tab.getByRole('link', { name: 'Transfers and jobs' }).click();
          const row = tab.locator('li.job').filter({ hasText: `${loc.label}/${b}/tmp/*.tmp (+1 more)` });
          await row.getByText('failed', { exact: true }).waitFor();
          assert.equal(await row.locator('.bar').getAttribute('class'), 'bar failed');
          await row.locator('.bar.failed').getByText('100% · 1 failed').waitFor();
          assert.match(await row.innerText(), /2 of 2 objects \(1 done, 0 skipped, 1 failed\)/);
          assert.match(await row.innerText(), /1 of 2 objects failed/);
          await row.getByRole('button', { name: 'Show 1 failure' }).click();
          await row.getByRole('row', { name: /tmp\/gone\.tmp/ }).waitFor();
          await row.getByRole('button', { name: 'Retry failed objects' }).waitFor();
          await tab.screenshot({
            path: join(shots, `transfer-failures-${width}-${database.name}.png`),
            fullPage: true,
          });
          assert.deepEqual(await axeViolations(tab), []);
        } finally {
          await tab.close();
        }
      });

      test(`at ${width} px, revoking the signed-in key returns the console to sign-in with the reason, at once`, async () => {
        const call = await newWorkspace(t);
        const made = await call({ method: 'POST', url: '/v1/tokens', payload: { name: `tab ${width}` } });
        const tab = await browser.newPage({ viewport: { width, height: 844 } });
        try {
          await tab.goto(`${base}/`);
          await tab.getByLabel('API key').fill(made.json().token);
          await tab.getByRole('button', { name: 'Sign in' }).click();
          await tab.getByRole('status').filter({ hasText: 'Live' }).waitFor();
          // Nothing else happens in the tab: only the event stream can bring the news.
          const revoked = await call({ method: 'DELETE', url: `/v1/tokens/${made.json().id}` });
          assert.equal(revoked.statusCode, 204);
          await tab
            .getByRole('alert')
            .filter({ hasText: 'The API key was refused (the API key has been revoked). Sign in again.' })
            .waitFor();
          await tab.getByLabel('API key').waitFor();
          assert.equal(await tab.evaluate('sessionStorage.length'), 0);
          assert.deepEqual(await axeViolations(tab), []);
        } finally {
          await tab.close();
        }
      });
    }
  });
}
