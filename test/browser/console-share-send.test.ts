// Share and send from the console's Browse page, in chromium on both databases against s3rver and a
// real SMTP server, at 1280 and 390 px: a share with a password, an expiry and a download limit, opened
// with its password; a send with cc, bcc and reply-to that goes once however often Send is clicked;
// the confirmation before a send is canceled. axe-core in each state; screenshots in
// test-artifacts/console/.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { axeViolations, browserSkip, widthsOn } from '../support/browser.js';
import { buildConsole, type ConsoleFiles, startConsoleFiles } from '../support/console-files.js';
import { testDatabases } from '../support/databases.js';

const skip = browserSkip();
buildConsole();

for (const database of await testDatabases()) {
  // One width on each database, both widths in all (test/support/browser.ts, widthsOn).
  const widths = await widthsOn(database);
  describe(`console share and send in chromium [${database.name}]`, {
    skip: skip ?? database.skip ?? false,
  }, () => {
    let c: ConsoleFiles;
    before(async () => {
      c = await startConsoleFiles(database);
    });
    after(async () => {
      await c?.close();
    });

    for (const width of widths) {
      test(`at ${width} px, a share with a password, an expiry and a download limit; its link asks the password and serves the file`, async () => {
        const { bucket, id, label, base, call, browser, tab, shot } = c;
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
        const { bucket, id, label, base, call, smtp, tab, shot } = c;
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
