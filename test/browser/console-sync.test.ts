// The console's Sync and Schedules pages (docs/console.md, "Sync" and "Schedules") in chromium against
// s3rver, on both databases: SQLite at 1280 px, PostgreSQL at 390 px (a phone: tables as cards), each
// page also measured at the other width for horizontal scroll. A sync with a filter and delete is
// previewed (its counts, its entries, its expiry), the plan is run and its job seen complete with the
// objects at the destination, its deletion counted and the complete job at 100 %, opened on its own
// page with its locations by label; a schedule made in words shows where it goes from and to and its
// next run, is paused and resumed, run now with the run in its history shown finished and its job link
// opening the job, and deleted. axe-core in each state; screenshots in test-artifacts/console/
// (docs/console/ keeps some).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { Page } from 'playwright-core';
import { axeViolations, browserSkip } from '../support/browser.js';
import { buildConsole, type ConsoleFiles, startConsoleFiles } from '../support/console-files.js';
import { testDatabases } from '../support/databases.js';
import { readS3, waitFor } from '../support/transfers.js';
import { waitUntil } from '../support/wait.js';

const skip = browserSkip();
buildConsole();

/** The document's and the body's scrollWidth against the window's width. */
async function overflow(page: Page): Promise<string | undefined> {
  // A string: the server's TypeScript has no DOM types.
  const m = (await page.evaluate(
    '({ width: window.innerWidth, doc: document.documentElement.scrollWidth, body: document.body.scrollWidth })',
  )) as { width: number; doc: number; body: number };
  return m.doc > m.width || m.body > m.width ? `scrollWidth ${m.doc}/${m.body} > ${m.width}` : undefined;
}

for (const database of await testDatabases()) {
  const width = database.name === 'sqlite' ? 1280 : 390;
  const other = width === 1280 ? 390 : 1280;
  describe(`console sync and schedules in chromium [${database.name}, ${width} px]`, {
    skip: skip ?? database.skip ?? false,
  }, () => {
    let c: ConsoleFiles;
    const put = (key: string, body: string) =>
      c.client.send(new PutObjectCommand({ Bucket: c.bucket, Key: key, Body: body }));
    before(async () => {
      c = await startConsoleFiles(database);
      await Promise.all([
        put('src/a.txt', 'alpha\n'),
        put('src/deep/b.txt', 'bravo\n'),
        put('src/skip.log', 'not this\n'),
        put('dst/a.txt', 'alpha\n'),
        put('dst/old.txt', 'gone after the sync\n'),
      ]);
    });
    after(async () => {
      await c?.close();
    });

    test('a sync with a filter and delete: previewed (counts, entries, expiry), the plan run, its job complete, the destination as the source', async () => {
      const { bucket, call, client, tab, shot } = c;
      const page = await tab(width, '#sync');
      try {
        await page.getByRole('heading', { name: 'Sync', level: 1 }).waitFor();
        // Reached through the navigation too.
        assert.equal(
          await page.getByRole('navigation').getByRole('link', { name: 'Sync' }).getAttribute('href'),
          '#sync',
        );
        // Sync now, without a preview: the job's progress follows on the page until it is complete.
        await page.getByLabel('Source folder').fill(`${bucket}/src/`);
        await page.getByLabel('Destination folder').fill(`${bucket}/now/`);
        await page.getByLabel('Compare by').selectOption('size');
        await page.getByRole('button', { name: 'Sync now', exact: true }).click();
        const nowBar = page.getByRole('progressbar', { name: /^Progress of job / });
        await nowBar.waitFor();
        const nowJob = String(await nowBar.getAttribute('aria-label')).replace('Progress of job ', '');
        await page.locator('.job .badge.complete').waitFor();
        assert.equal((await waitFor(call, `/v1/jobs/${nowJob}`)).kind, 'sync');
        assert.equal(String(await readS3(client, bucket, 'now/deep/b.txt')), 'bravo\n');
        assert.equal(String(await readS3(client, bucket, 'now/skip.log')), 'not this\n');
        await page.getByText('3 of 3 objects (3 copied, 0 skipped, 0 failed').waitFor();
        await shot(page, 'sync-now', width);
        assert.deepEqual(await axeViolations(page), []);

        // Previewed first: a filter and delete.
        await page.getByLabel('Source folder').fill(`${bucket}/src/`);
        await page.getByLabel('Destination folder').fill(`${bucket}/dst/`);
        await page.getByLabel('Compare by').selectOption('checksum');
        await page.getByLabel('Delete at the destination what the source lacks').check();
        await page.getByLabel(/^Delete at most/).fill('5');
        await page.getByLabel(/^Exclude/).fill('*.log');
        assert.deepEqual(await axeViolations(page), []);
        await page.getByRole('button', { name: 'Preview', exact: true }).click();

        const plan = page.getByRole('region', { name: 'The plan' });
        await plan.waitFor();
        await plan.getByText('The plan expires at').waitFor();
        const rows = plan.getByRole('table', { name: 'Objects in the plan' });
        await rows.getByText('deep/b.txt').waitFor();
        const shown = await rows.textContent();
        assert.match(String(shown), /old\.txt/, 'the delete is in the plan');
        assert.doesNotMatch(String(shown), /skip\.log/, 'the excluded object is not');
        assert.ok((await plan.locator('dl.counts dt').count()) > 0, 'the counts');
        // The preview changed nothing.
        assert.equal(await readS3(client, bucket, 'dst/deep/b.txt'), undefined);
        assert.equal(String(await readS3(client, bucket, 'dst/old.txt')), 'gone after the sync\n');
        await shot(page, 'sync-plan', width);
        assert.deepEqual(await axeViolations(page), []);

        await plan.getByRole('button', { name: 'Run this plan' }).click();
        const bar = page.getByRole('progressbar', { name: /^Progress of job / });
        await bar.waitFor();
        const label = String(await bar.getAttribute('aria-label'));
        const jobId = label.replace('Progress of job ', '');
        await page.locator('.job .badge.complete').waitFor();
        const job = await waitFor(call, `/v1/jobs/${jobId}`);
        assert.equal(job.status, 'complete');
        assert.equal(job.kind, 'sync');
        assert.equal(String(await readS3(client, bucket, 'dst/deep/b.txt')), 'bravo\n');
        assert.equal(String(await readS3(client, bucket, 'dst/a.txt')), 'alpha\n');
        assert.equal(await readS3(client, bucket, 'dst/skip.log'), undefined);
        assert.equal(await readS3(client, bucket, 'dst/old.txt'), undefined);
        // The deletion is counted, and the complete sync is at 100 % (its total counts the deletion).
        await page.getByText('3 of 3 objects (1 copied, 1 skipped, 0 failed, 1 deleted)').waitFor();
        assert.equal(await bar.getAttribute('value'), '100');
        await shot(page, 'sync-done', width);
        assert.deepEqual(await axeViolations(page), []);

        // The job on its own page, its locations by label, not by id; so is a transfer given by id.
        const single = await call({
          method: 'POST',
          url: '/v1/copy',
          payload: { from: `${c.id}:${bucket}/src/a.txt`, to: `${c.id}:${bucket}/single/a.txt` },
        });
        assert.equal(single.statusCode, 202, single.body);
        await waitFor(call, `/v1/transfers/${single.json().id}`);
        await page.getByRole('link', { name: 'Open this job' }).click();
        await page.getByRole('heading', { name: `Job ${jobId.slice(0, 8)}`, level: 1 }).waitFor();
        const jobBar = page.getByRole('progressbar', {
          name: `Progress of ${c.label}:${bucket}/src/ → ${c.label}:${bucket}/dst/`,
        });
        assert.equal(await jobBar.getAttribute('value'), '100');
        await page.getByText('3 of 3 objects (1 copied, 1 skipped, 0 failed, 1 deleted)').waitFor();
        await shot(page, 'sync-job', width);
        assert.deepEqual(await axeViolations(page), []);
        await page.getByRole('link', { name: 'All transfers and jobs' }).click();
        await page.getByText(`${c.label}:${bucket}/src/a.txt → ${c.label}:${bucket}/single/a.txt`).waitFor();
        assert.doesNotMatch(await page.locator('main').innerText(), new RegExp(c.id), 'no location id shown');
        await page.goto(`${c.base}/#sync`);
        await page.getByLabel('Destination folder').fill(`${bucket}/dst/`);

        // A refusal in words: a source path with a `..` segment.
        await page.getByLabel('Source folder').fill(`${bucket}/src/../dst/`);
        await page.getByRole('button', { name: 'Sync now', exact: true }).click();
        await page.getByRole('alert').filter({ hasText: 'ferry did not accept that' }).waitFor();
        assert.deepEqual(await axeViolations(page), []);

        await page.setViewportSize({ width: other, height: 844 });
        assert.equal(await overflow(page), undefined);
      } finally {
        await page.close();
      }
    });

    test('Preview and Sync now wait for the locations: pressed while /v1/locations has not answered, the plan names the first location', async () => {
      const { bucket, tab } = c;
      const page = await tab(width, '#activity');
      let answer: () => void = () => {};
      const answered = new Promise<void>((resolve) => {
        answer = resolve;
      });
      try {
        // The locations' answer held back until the form is filled and Preview pressed (seen once in CI:
        // a preview sent before it named no location, and no plan came).
        await page.route('**/v1/locations', async (route) => {
          await answered;
          await route.continue();
        });
        await page.goto(`${c.base}/#sync`);
        await page.getByRole('heading', { name: 'Sync', level: 1 }).waitFor();
        await page.getByLabel('Source folder').fill(`${bucket}/src/`);
        await page.getByLabel('Destination folder').fill(`${bucket}/early/`);
        const preview = page.getByRole('button', { name: 'Preview', exact: true });
        assert.equal(await preview.isDisabled(), true, 'Preview waits for the locations');
        assert.equal(
          await page.getByRole('button', { name: 'Sync now', exact: true }).isDisabled(),
          true,
          'Sync now waits for the locations',
        );
        const pressed = preview.click();
        answer();
        await pressed;
        await page.getByRole('region', { name: 'The plan' }).getByText('deep/b.txt').waitFor();
      } finally {
        answer();
        await page.close();
      }
    });

    test('a schedule made in words: its next run, paused and resumed, run now with the run in its history, deleted (a copy)', async () => {
      const { bucket, call, client, tab, shot } = c;
      const name = `nightly ${width}`;
      const page = await tab(width, '#schedules');
      try {
        await page.getByRole('heading', { name: 'Schedules', level: 1 }).waitFor();
        await page.getByText('No schedules yet.').waitFor();
        // The browser's own zone is offered first.
        const zone = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
        assert.equal(await page.getByLabel('Time zone').inputValue(), zone);
        assert.equal(await page.locator('#schedule-timezone option').first().textContent(), zone);
        await page.getByLabel('Name', { exact: true }).fill(name);
        await page.getByLabel(/^Every/).fill('every day at 02:00');
        await page.getByLabel('Time zone').selectOption('Europe/Paris');
        // A copy this time (the Sync page above is the sync): the same fields, with the overwrite mode.
        await page.getByLabel('Action', { exact: true }).selectOption('copy');
        await page.getByLabel('Objects already there').selectOption('if-missing');
        assert.equal(await page.getByLabel('Compare by').count(), 0);
        await page.getByLabel('Source folder').fill(`${bucket}/src/`);
        await page.getByLabel('Destination folder').fill(`${bucket}/sched/`);
        assert.deepEqual(await axeViolations(page), []);
        await page.getByRole('button', { name: 'Create schedule' }).click();
        await page.getByText(`Schedule ${name} created: next run`).waitFor();

        const listed = (await call({ method: 'GET', url: '/v1/schedules' })).json().schedules as Array<
          Record<string, unknown>
        >;
        const made = listed.find((s) => s.name === name);
        assert.ok(made, 'created');
        assert.equal(made.timezone, 'Europe/Paris');
        assert.equal(made.paused, false);
        const next = new Date(String(made.next_run_at));
        assert.equal(
          next.toLocaleTimeString('en-GB', { timeZone: 'Europe/Paris', hour: '2-digit', minute: '2-digit' }),
          '02:00',
        );
        assert.ok(next.getTime() > Date.now() && next.getTime() <= Date.now() + 86_400_000);
        const row = page.getByRole('row', { name: new RegExp(name) });
        // Where it goes from and to, locations by label.
        await row.getByText(`copy ${c.label}:${bucket}/src/ → ${c.label}:${bucket}/sched/`).waitFor();
        // The next run in the schedule's zone, naming it: 02:00 in Paris, whatever the browser's zone
        // (UTC here, where it is 01:00 or 00:00), as the words "every day at 02:00" say it.
        await row.getByText(/\b2:00\sAM \(Europe\/Paris\)$/).waitFor();
        await shot(page, 'schedules', width);
        assert.deepEqual(await axeViolations(page), []);

        await row.getByRole('button', { name: `Pause ${name}` }).click();
        await row.getByRole('button', { name: `Resume ${name}` }).waitFor();
        await row.getByText('paused', { exact: true }).waitFor();
        assert.equal((await call({ method: 'GET', url: `/v1/schedules/${made.id}` })).json().paused, true);
        await row.getByRole('button', { name: `Resume ${name}` }).click();
        await row.getByRole('button', { name: `Pause ${name}` }).waitFor();
        assert.equal((await call({ method: 'GET', url: `/v1/schedules/${made.id}` })).json().paused, false);

        await row.getByRole('button', { name: `Run now: ${name}` }).click();
        await page.getByText(`${name} started`).waitFor();
        const ran = await waitUntil(
          async () => {
            const s = (await call({ method: 'GET', url: `/v1/schedules/${made.id}` })).json();
            return typeof s.last_job_id === 'string' ? String(s.last_job_id) : undefined;
          },
          { what: 'the run now to start a job' },
        );
        assert.equal((await waitFor(call, `/v1/jobs/${ran}`)).status, 'complete');
        assert.equal(String(await readS3(client, bucket, 'sched/deep/b.txt')), 'bravo\n');
        assert.equal(String(await readS3(client, bucket, 'sched/skip.log')), 'not this\n');
        assert.deepEqual(made.action, {
          copy: { from: `${c.id}:${bucket}/src/`, to: `${c.id}:${bucket}/sched/`, overwrite: 'if-missing' },
        });

        // The schedule's own page: from and to, its runs, the finished one as finished, with a link to
        // the job that opens it.
        await page.getByRole('link', { name, exact: true }).click();
        await page.getByRole('heading', { name, level: 1 }).waitFor();
        await page.getByText(`${c.label}:${bucket}/src/`, { exact: true }).waitFor();
        await page.getByText(`${c.label}:${bucket}/sched/`, { exact: true }).waitFor();
        const runs = page.getByRole('table', { name: 'Recent runs' });
        const run = runs.getByRole('row').filter({ has: page.locator(`a[href="#activity/${ran}"]`) });
        await run.getByText('finished', { exact: true }).waitFor();
        await shot(page, 'schedule-runs', width);
        assert.deepEqual(await axeViolations(page), []);
        await page.setViewportSize({ width: other, height: 844 });
        assert.equal(await overflow(page), undefined);
        await page.setViewportSize({ width, height: 844 });
        await run.getByRole('link', { name: `job ${ran.slice(0, 8)}` }).click();
        await page.getByRole('heading', { name: `Job ${ran.slice(0, 8)}`, level: 1 }).waitFor();
        await page.getByText('3 of 3 objects (3 copied, 0 skipped, 0 failed)').waitFor();
        await page.getByRole('link', { name: 'a schedule' }).click();
        await page.getByRole('heading', { name, level: 1 }).waitFor();

        await page.getByRole('link', { name: 'All schedules' }).click();
        const again = page.getByRole('row', { name: new RegExp(name) });
        await again.locator(`a[href="#activity/${ran}"]`).waitFor();
        await page.setViewportSize({ width: other, height: 844 });
        assert.equal(await overflow(page), undefined);
        await page.setViewportSize({ width, height: 844 });
        await again.getByRole('button', { name: `Delete ${name}` }).click();
        await again.getByRole('button', { name: `Yes, delete ${name}` }).click();
        await page.getByText('No schedules yet.').waitFor();
        assert.equal((await call({ method: 'GET', url: `/v1/schedules/${made.id}` })).statusCode, 404);
      } finally {
        await page.close();
      }
    });
  });
}
