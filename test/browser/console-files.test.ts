// The console's Browse page in a real browser (chromium through playwright-core) on both databases,
// against s3rver, at 1280 and 390 px: a new folder takes three files dropped on it with progress bars,
// stored byte for byte in the bucket, and one comes back whole as a download; an upload held slow is
// canceled and leaves nothing. The large one of the three is 50 MiB at 1280 px and 10 MiB at 390 px,
// where the layout is what is new, so that the file keeps within the runner's time per file on a
// loaded machine. An upload over a name the folder has asks first (Keep, then Replace). axe-core in each state; screenshots in test-artifacts/console/. (Selection:
// console-selection.test.ts; share and send: console-share-send.test.ts; their setup:
// test/support/console-files.ts.)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { axeViolations, browserSkip, widthsOn } from '../support/browser.js';
import { buildConsole, type ConsoleFiles, startConsoleFiles } from '../support/console-files.js';
import { testDatabases } from '../support/databases.js';
import { readS3 } from '../support/transfers.js';
import { waitUntil } from '../support/wait.js';

const skip = browserSkip();
buildConsole();

const MiB = 1024 * 1024;
const bigAt = (width: number) => (width === 1280 ? 50 : 10) * MiB;

/**
 * `size` bytes of xorshift32 from a fixed seed: the page makes the 50 MiB file with this same function
 * (its source is written into the expression the page evaluates), and the test makes it again to
 * compare, so nothing that large is committed or sent to the page.
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

for (const database of await testDatabases()) {
  // One width on each database, both widths in all (test/support/browser.ts, widthsOn).
  const widths = await widthsOn(database);
  describe(`console upload and download in chromium [${database.name}]`, {
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
      test(`at ${width} px, a new folder takes three dropped files (one of ${bigAt(width) / MiB} MiB) with progress, byte for byte; one downloads whole; an upload is canceled`, async () => {
        const folder = `up${width}`;
        const BIG = bigAt(width);
        const { client, bucket, id, tab, shot } = c;
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
            .getByText(`${BIG / MiB} MiB`)
            .waitFor();
          await shot(page, 'uploaded', width);
          assert.deepEqual(await axeViolations(page), []);
          const stored = await readS3(client, bucket, `${folder}/big.bin`);
          assert.equal(stored?.length, BIG);
          assert.ok(stored?.equals(pseudoRandom(BIG)), 'the large file is stored byte for byte');
          assert.equal(String(await readS3(client, bucket, `${folder}/one.txt`)), 'first file\n');
          assert.equal(String(await readS3(client, bucket, `${folder}/two.txt`)), 'second file\n');

          // An upload over a name the folder has asks first: Keep leaves the file there as it was,
          // Replace uploads the new one.
          const again = {
            name: 'one.txt',
            mimeType: 'text/plain',
            buffer: Buffer.from('a newer first file\n'),
          };
          await page.getByLabel('Upload files').setInputFiles(again);
          const ask = page.getByRole('alertdialog', { name: /one\.txt is already in/ });
          await ask.waitFor();
          const keep = ask.getByRole('button', { name: 'Keep the file there' });
          await waitUntil(async () => (await keep.evaluate((b) => b.matches(':focus'))) || undefined, {
            what: 'Keep to have the focus',
          });
          await shot(page, 'upload-replace', width);
          assert.deepEqual(await axeViolations(page), []);
          await keep.click();
          await ask.waitFor({ state: 'detached' });
          assert.equal(
            await page.getByRole('progressbar', { name: 'Upload of one.txt' }).count(),
            1,
            'no second upload',
          );
          assert.equal(String(await readS3(client, bucket, `${folder}/one.txt`)), 'first file\n');
          await page.getByLabel('Upload files').setInputFiles(again);
          await ask.getByRole('button', { name: 'Replace', exact: true }).click();
          await page
            .getByRole('progressbar', { name: 'Upload of one.txt' })
            .and(page.locator('[aria-valuetext^="done"]'))
            .nth(1)
            .waitFor();
          assert.equal(String(await readS3(client, bucket, `${folder}/one.txt`)), 'a newer first file\n');

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

          // Cancel: the browser's uploads held to 1 MiB/s, so that the file is still going when it is
          // canceled; nothing of it is stored and the listing does not show it.
          const cdp = await page.context().newCDPSession(page);
          await cdp.send('Network.emulateNetworkConditions', {
            offline: false,
            latency: 0,
            downloadThroughput: -1,
            uploadThroughput: 1024 * 1024,
          });
          await page.getByLabel('Upload files').setInputFiles({
            name: 'late.bin',
            mimeType: 'application/octet-stream',
            buffer: Buffer.alloc(8 * 1024 * 1024, 7),
          });
          const late = page.getByRole('progressbar', { name: 'Upload of late.bin' });
          await late.and(page.locator('[aria-valuetext*="of 8.0 MiB"]')).waitFor();
          await page.getByRole('button', { name: 'Cancel upload of late.bin' }).click();
          await late.and(page.locator('[aria-valuetext="canceled"]')).waitFor();
          await cdp.send('Network.emulateNetworkConditions', {
            offline: false,
            latency: 0,
            downloadThroughput: -1,
            uploadThroughput: -1,
          });
          assert.equal(await readS3(client, bucket, `${folder}/late.bin`), undefined);
          assert.equal(await page.getByRole('row', { name: /late\.bin/ }).count(), 0);
        } finally {
          await page.close();
        }
      });
    }
  });
}
