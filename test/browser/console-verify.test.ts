// The console's Verify (docs/console.md, "Browse" and "Schedules"; docs/api.md, "Verify") in chromium
// against s3rver, on both databases at the widths of test/support/browser.ts (widthsOn): a folder in
// Browse verified against another (one object equal, one differing at the same size, one on each side
// only), its job opened with what it found and nothing written; a sync's schedule verified from its row;
// a schedule whose action is a verify made with the form. axe-core in each state, no horizontal scroll
// at either width.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import type { Page } from 'playwright-core';
import { axeViolations, browserSkip, widthsOn } from '../support/browser.js';
import { buildConsole, type ConsoleFiles, startConsoleFiles } from '../support/console-files.js';
import { testDatabases } from '../support/databases.js';
import { waitFor } from '../support/transfers.js';

const skip = browserSkip();
buildConsole();

/** The document's and the body's scrollWidth against the window's width. */
async function overflow(page: Page): Promise<string | undefined> {
  const m = (await page.evaluate(
    '({ width: window.innerWidth, doc: document.documentElement.scrollWidth, body: document.body.scrollWidth })',
  )) as { width: number; doc: number; body: number };
  return m.doc > m.width || m.body > m.width ? `scrollWidth ${m.doc}/${m.body} > ${m.width}` : undefined;
}

for (const database of await testDatabases()) {
  const widths = await widthsOn(database);
  describe(`console verify in chromium [${database.name}]`, { skip: skip ?? database.skip ?? false }, () => {
    let c: ConsoleFiles;
    const put = (key: string, body: string) =>
      c.client.send(new PutObjectCommand({ Bucket: c.bucket, Key: key, Body: body }));
    /** Every key, ETag and size under a prefix: what a verify must leave as it was. */
    const listing = async (prefix: string) =>
      ((await c.client.send(new ListObjectsV2Command({ Bucket: c.bucket, Prefix: prefix }))).Contents ?? [])
        .map((o) => `${o.Key} ${o.ETag} ${o.Size}`)
        .sort();
    before(async () => {
      c = await startConsoleFiles(database);
      for (const w of widths) {
        await Promise.all([
          put(`vsrc${w}/same.txt`, 'the same\n'),
          put(`vsrc${w}/deep/changed.txt`, 'abcdef\n'),
          put(`vsrc${w}/new.txt`, 'only here\n'),
          put(`vdst${w}/same.txt`, 'the same\n'),
          put(`vdst${w}/deep/changed.txt`, 'abcdeF\n'),
          put(`vdst${w}/old.txt`, 'only there\n'),
        ]);
      }
    });
    after(async () => {
      await c?.close();
    });

    for (const width of widths) {
      const other = width === 1280 ? 390 : 1280;

      test(`a folder verified from Browse: the job says what it found, nothing written [${width} px]`, async () => {
        const { bucket, call, tab, shot } = c;
        const before = [await listing(`vsrc${width}/`), await listing(`vdst${width}/`)];
        const page = await tab(width, `#browse/${c.id}/${bucket}`);
        try {
          await page.getByRole('button', { name: `Verify vsrc${width}`, exact: true }).click();
          const panel = page.getByRole('region', { name: `Verify ${bucket}/vsrc${width}/` });
          await panel.waitFor();
          // A file is not verified alone: only folders offer it.
          assert.equal(await page.getByRole('button', { name: 'Verify seed.txt' }).count(), 0);
          await panel.getByLabel('Folder to compare with').fill(`${bucket}/vdst${width}/`);
          assert.equal(await panel.getByLabel('Compare by').inputValue(), 'checksum');
          assert.deepEqual(await axeViolations(page), []);
          await panel.getByRole('button', { name: 'Start verify' }).click();
          await panel.getByText(/^Verify started \(job [0-9a-f-]{36}\)/).waitFor();
          const text = String(await panel.getByText(/^Verify started/).textContent());
          const jobId = String(/job ([0-9a-f-]{36})/.exec(text)?.[1]);
          const job = await waitFor(call, `/v1/jobs/${jobId}`);
          assert.equal(job.kind, 'verify');
          assert.equal(job.status, 'complete');
          await shot(page, 'verify-browse', width);
          assert.deepEqual(await axeViolations(page), []);
          await panel.getByRole('link', { name: 'See progress' }).click();
          await page.getByRole('heading', { name: `Job ${jobId.slice(0, 8)}`, level: 1 }).waitFor();
          await page
            .getByText(
              '4 of 4 objects compared (1 equal, 1 differ, 1 missing in destination, 1 missing in source, 0 failed)',
            )
            .waitFor();
          await shot(page, 'verify-job', width);
          assert.deepEqual(await axeViolations(page), []);
          assert.deepEqual(
            [await listing(`vsrc${width}/`), await listing(`vdst${width}/`)],
            before,
            'a verify writes nothing',
          );
          await page.setViewportSize({ width: other, height: 844 });
          assert.equal(await overflow(page), undefined);
        } finally {
          await page.close();
        }
      });

      test(`a sync's schedule verified from its row; a verify schedule made with the form [${width} px]`, async () => {
        const { bucket, call, tab, shot } = c;
        const name = `mirror ${width}`;
        const action = {
          sync: {
            from: `${c.id}:${bucket}/vsrc${width}/`,
            to: `${c.id}:${bucket}/vdst${width}/`,
            filter: { exclude: ['*.log'] },
          },
        };
        const made = await call({
          method: 'POST',
          url: '/v1/schedules',
          payload: { name, every: 'every day at 03:00', action, paused: true },
        });
        assert.equal(made.statusCode, 201, made.body);
        const page = await tab(width, '#schedules');
        try {
          const row = page.getByRole('row', { name: new RegExp(name) });
          await row.getByRole('button', { name: `Verify ${name}` }).click();
          const notice = page.getByText(new RegExp(`^Verify of ${name} started: job [0-9a-f-]{36}\\.$`));
          await notice.waitFor();
          const jobId = String(/job ([0-9a-f-]{36})/.exec(String(await notice.textContent()))?.[1]);
          const job = await waitFor(call, `/v1/jobs/${jobId}`);
          const counts = job.counts as Record<string, number>;
          assert.equal(job.kind, 'verify');
          assert.deepEqual(job.filter, { exclude: ['*.log'] });
          assert.equal(counts.differ, 1);
          assert.equal(counts.missing_in_source, 1);
          assert.equal(
            (await call({ method: 'GET', url: `/v1/schedules/${made.json().id}` })).json().last_job_id,
            undefined,
            'a verify of the folders, not a run of the schedule',
          );
          assert.deepEqual(await axeViolations(page), []);

          // A schedule whose action is a verify: its mode, and no bandwidth limit (a verify has none).
          const checker = `weekly check ${width}`;
          await page.getByLabel('Name', { exact: true }).fill(checker);
          await page.getByLabel(/^Every/).fill('every sunday at 04:00');
          await page.getByLabel('Action', { exact: true }).selectOption('verify');
          await page.getByLabel('Source folder').fill(`${bucket}/vsrc${width}/`);
          await page.getByLabel('Destination folder').fill(`${bucket}/vdst${width}/`);
          await page.getByLabel('Compare by').selectOption('download');
          assert.equal(await page.getByLabel(/^Bandwidth limit/).count(), 0);
          assert.equal(await page.getByLabel('Objects already there').count(), 0);
          assert.deepEqual(await axeViolations(page), []);
          await page.getByRole('button', { name: 'Create schedule' }).click();
          await page.getByText(`Schedule ${checker} created: next run`).waitFor();
          const listed = (await call({ method: 'GET', url: '/v1/schedules' })).json().schedules as Array<
            Record<string, unknown>
          >;
          assert.deepEqual(listed.find((s) => s.name === checker)?.action, {
            verify: {
              from: `${c.id}:${bucket}/vsrc${width}/`,
              to: `${c.id}:${bucket}/vdst${width}/`,
              mode: 'download',
            },
          });
          await page
            .getByRole('row', { name: new RegExp(checker) })
            .getByText(`verify ${c.label}:${bucket}/vsrc${width}/ → ${c.label}:${bucket}/vdst${width}/`)
            .waitFor();
          await shot(page, 'verify-schedules', width);
          assert.deepEqual(await axeViolations(page), []);
          await page.setViewportSize({ width: other, height: 844 });
          assert.equal(await overflow(page), undefined);
        } finally {
          await page.close();
        }
      });
    }
  });
}
