// The console's Browse page with the keyboard alone and with a selection, in chromium on both
// databases against s3rver, at 1280 and 390 px: an upload through the file input, the filter, two files
// selected by keyboard and copied (the job awaited through the API); a selection moved and removed,
// each after its preview; the removal removes exactly what its preview showed (a plan, docs/api.md
// "Plans"): a file added to the folder between preview and confirm stays. axe-core in each state;
// screenshots in test-artifacts/console/.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { axeViolations, browserSkip, widthsOn } from '../support/browser.js';
import { buildConsole, type ConsoleFiles, startConsoleFiles, tabTo } from '../support/console-files.js';
import { testDatabases } from '../support/databases.js';
import { readS3, waitFor } from '../support/transfers.js';
import { waitUntil } from '../support/wait.js';

const skip = browserSkip();
buildConsole();

for (const database of await testDatabases()) {
  // One width on each database, both widths in all (test/support/browser.ts, widthsOn).
  const widths = await widthsOn(database);
  describe(`console selection in chromium [${database.name}]`, {
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
      test(`at ${width} px, with the keyboard alone: upload through the file input, filter, select two files and copy them`, async () => {
        const { client, bucket, id, call, tab, shot } = c;
        const page = await tab(width, `#browse/${id}/${bucket}/sel${width}`);
        try {
          await page.getByRole('row', { name: /one\.txt/ }).waitFor();
          const input = page.getByLabel('Upload files');
          // Listening turns on Playwright's file chooser interception, a message it does not wait
          // for: begun right before the key press, the press can reach chromium first and open no
          // chooser Playwright sees (CI, Node 24, once). The Tab walk gives it time to arrive.
          const choosing = page.waitForEvent('filechooser');
          await tabTo(page, input, 'the file input');
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

      test(`at ${width} px, a selection moves and is removed only after its preview`, async () => {
        const { client, bucket, id, base, tab, shot, call } = c;
        const page = await tab(width, `#browse/${id}/${bucket}/sel${width}`);
        const gone = (key: string) =>
          waitUntil(async () => ((await readS3(client, bucket, key)) === undefined ? true : undefined), {
            what: `${key} gone`,
          });
        try {
          await page.getByLabel('Select pic.bin').check();
          await page.getByLabel('Select one.txt').check();
          await page.getByRole('button', { name: 'Move selected', exact: true }).click();
          await page.getByLabel('Destination folder').fill(`${bucket}/moved${width}/`);
          await page.getByRole('button', { name: 'Preview move', exact: true }).click();
          await page.getByText('These 2 entries would be moved').waitFor();
          assert.ok(
            await readS3(client, bucket, `sel${width}/pic.bin`),
            'nothing moves before the confirmation',
          );
          await page.getByRole('button', { name: 'Move 2 entries' }).click();
          await page.getByText('Move started').waitFor();
          await gone(`sel${width}/pic.bin`);
          assert.equal(String(await readS3(client, bucket, `moved${width}/pic.bin`)), 'not text');
          assert.equal(String(await readS3(client, bucket, `moved${width}/one.txt`)), 'first file\n');
          assert.ok(await readS3(client, bucket, `sel${width}/two.txt`), 'not selected, not moved');

          // The folder as a whole: its preview is a plan of the two files in it.
          await page.goto(`${base}/#browse/${id}/${bucket}`);
          await page.getByLabel(`Select moved${width}`).check();
          await page.getByRole('button', { name: 'Remove selected', exact: true }).click();
          await page.getByRole('button', { name: 'Preview removal' }).click();
          await page.getByText('These 2 entries would be removed').waitFor();
          assert.ok(
            await readS3(client, bucket, `moved${width}/pic.bin`),
            'nothing is removed by the preview',
          );
          await shot(page, 'selection-remove-preview', width);
          assert.deepEqual(await axeViolations(page), []);
          // Added after the preview: not in what was shown, so not removed.
          await client.send(
            new PutObjectCommand({ Bucket: bucket, Key: `moved${width}/late.txt`, Body: 'came later' }),
          );
          await page.getByRole('button', { name: 'Remove 2 entries' }).click();
          const started = await page.getByText(/Removal started \(transfer [0-9a-f-]{36}\)/).innerText();
          const transfer = /transfer ([0-9a-f-]{36})/.exec(started)?.[1];
          const done = await waitFor(call, `/v1/transfers/${transfer}`);
          assert.equal(done.status, 'complete', JSON.stringify(done));
          assert.deepEqual(done.counts, {
            total: 3,
            pending: 0,
            succeeded: 2,
            skipped: 1,
            failed: 0,
            deleted: 0,
            size_only: 0,
          });
          await gone(`moved${width}/pic.bin`);
          await gone(`moved${width}/one.txt`);
          assert.equal(String(await readS3(client, bucket, `moved${width}/late.txt`)), 'came later');
        } finally {
          await page.close();
        }
      });
    }
  });
}
