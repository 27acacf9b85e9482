// The console's Undo (docs/console.md, "Activity"; docs/api.md, "Undo") in chromium against s3rver, on
// both databases (SQLite at 1280 px, PostgreSQL at 390 px: test/support/browser.ts, widthsOn): a sync
// run with backup_to shows Undo once finished, asked about first; confirmed, the undo job runs and the
// destination is as it was before the sync. A job without a backup shows no Undo; a remove with one
// offers Undo on its transfer, and its file comes back. axe-core in each state.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { axeViolations, browserSkip, widthsOn } from '../support/browser.js';
import { buildConsole, type ConsoleFiles, startConsoleFiles } from '../support/console-files.js';
import { testDatabases } from '../support/databases.js';
import { readS3, waitFor } from '../support/transfers.js';
import { waitUntil } from '../support/wait.js';

const skip = browserSkip();
buildConsole();

for (const database of await testDatabases()) {
  for (const width of await widthsOn(database)) {
    describe(`console undo in chromium [${database.name}, ${width} px]`, {
      skip: skip ?? database.skip ?? false,
    }, () => {
      let c: ConsoleFiles;
      const put = (key: string, body: string) =>
        c.client.send(new PutObjectCommand({ Bucket: c.bucket, Key: key, Body: body }));
      before(async () => {
        c = await startConsoleFiles(database);
      });
      after(async () => {
        await c?.close();
      });

      test('a finished sync with a backup offers Undo; confirmed, the destination is as it was', async () => {
        const { bucket, call, client, label, tab, shot } = c;
        const p = `u${width}`;
        await Promise.all([
          put(`${p}/src/a.txt`, 'new alpha\n'),
          put(`${p}/src/b.txt`, 'bravo\n'),
          put(`${p}/dst/a.txt`, 'old alpha, longer\n'),
        ]);
        const sync = async (backup: boolean) => {
          const res = await call({
            method: 'POST',
            url: '/v1/sync',
            payload: {
              from: `${label}:${bucket}/${p}/src/`,
              to: `${label}:${bucket}/${p}/${backup ? 'dst' : 'plain'}/`,
              ...(backup ? { backup_to: `${label}:${bucket}/${p}/kept/` } : {}),
            },
          });
          assert.equal(res.statusCode, 202, res.body);
          const job = await waitFor(call, `/v1/jobs/${res.json().job_id}`);
          assert.equal(job.status, 'complete', JSON.stringify(job));
          return String(job.job_id);
        };
        const plain = await sync(false);
        const id = await sync(true);
        assert.equal(String(await readS3(client, bucket, `${p}/kept/${id}/a.txt`)), 'old alpha, longer\n');

        const page = await tab(width, `#activity/${plain}`);
        try {
          await page.getByRole('button', { name: /^Download report of / }).waitFor();
          assert.equal(await page.getByRole('button', { name: /^Undo / }).count(), 0, 'no backup: no Undo');

          await page.goto(`${c.base}/#activity/${id}`);
          const undo = page.getByRole('button', { name: /^Undo / });
          await undo.waitFor();
          assert.deepEqual(await axeViolations(page), []);
          await undo.click();
          const dialog = page.getByRole('alertdialog');
          await dialog.getByText(/an object changed since is left alone/).waitFor();
          await shot(page, 'undo-confirm', width);
          assert.deepEqual(await axeViolations(page), []);
          await dialog.getByRole('button', { name: 'Confirm' }).click();

          const undone = await waitUntil(
            async () => {
              const res = await call({ method: 'GET', url: '/v1/jobs?limit=10' });
              const jobs = res.json().jobs as Array<{ job_id: string; undo_of?: string; status: string }>;
              return jobs.find((j) => j.undo_of === id && j.status === 'complete');
            },
            { what: 'the undo job to complete' },
          );
          assert.ok(undone);
          assert.equal(String(await readS3(client, bucket, `${p}/dst/a.txt`)), 'old alpha, longer\n');
          assert.equal(await readS3(client, bucket, `${p}/dst/b.txt`), undefined);
          await page.goto(`${c.base}/#activity`);
          await page.getByText('undo', { exact: true }).first().waitFor();
          await shot(page, 'undo-done', width);
          assert.deepEqual(await axeViolations(page), []);

          // A remove with a backup: its transfer offers Undo too, and the files come back.
          await put(`${p}/rm/x.txt`, 'ex\n');
          const removed = await call({
            method: 'POST',
            url: '/remove',
            payload: {
              path: `${label}/${bucket}/${p}/rm/*.txt`,
              backup_to: `${label}:${bucket}/${p}/kept-rm/`,
            },
          });
          assert.equal(removed.statusCode, 202, removed.body);
          const rm = await waitFor(call, `/v1/transfers/${removed.json().id}`);
          assert.equal(rm.status, 'complete', JSON.stringify(rm));
          assert.equal(await readS3(client, bucket, `${p}/rm/x.txt`), undefined);
          await page.reload();
          const undoRemove = page.getByRole('button', { name: /^Undo .*rm\/\*\.txt/ });
          await undoRemove.click();
          await page.getByRole('alertdialog').getByRole('button', { name: 'Confirm' }).click();
          await waitUntil(
            async () => (await readS3(client, bucket, `${p}/rm/x.txt`))?.toString() === 'ex\n',
            {
              what: 'the removed file to come back',
            },
          );
        } finally {
          await page.close();
        }
      });
    });
  }
}
