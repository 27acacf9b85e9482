// The console with keys of fewer scopes (docs/console.md, "Keys with fewer scopes"), in chromium on
// both databases against s3rver, at 1280 px (SQLite) and 390 px (PostgreSQL): a read-only key sees
// every page's data and is offered no write action, the header says what the key can do and, opened,
// which scope the rest needs, the pages it cannot use at all (API keys, Webhooks) say which scope they
// need, and nothing it does is refused (no 403); a key with read and share is offered share and send
// but not copy, move or remove; a key with transfer but not remove is not offered a sync's delete; a
// key limited to one location keeps Sign out on the header's first line at 1280 and 390 px; an admin
// key's form ticks only read to begin with and says so, creates a key with read, listed with its
// scopes, and that key signs in as read-only. axe-core in each state; screenshots in
// test-artifacts/console/.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { axeViolations, browserSkip, widthsOn } from '../support/browser.js';
import { buildConsole, type ConsoleFiles, startConsoleFiles } from '../support/console-files.js';
import { testDatabases } from '../support/databases.js';
import { waitFor } from '../support/transfers.js';

const skip = browserSkip();
buildConsole();

/** Buttons whose name starts with one of these words: the write actions of the pages. */
const WRITES =
  /^(New location|New bucket|New folder|Manage|Refresh|Rename|Revoke|Delete|Copy|Move|Remove|Share|Send|Pause|Resume|Run now|Run this plan|Sync now|Retry|Cancel|Create|Re-enable|Upload)\b/;

for (const database of await testDatabases()) {
  const widths = await widthsOn(database);
  describe(`console with scoped keys in chromium [${database.name}]`, {
    skip: skip ?? database.skip ?? false,
  }, () => {
    let c: ConsoleFiles;
    before(async () => {
      c = await startConsoleFiles(database);
    });
    after(async () => {
      await c?.close();
    });

    /** A key of this workspace with only `scopes`. */
    async function keyWith(name: string, scopes: string[]): Promise<string> {
      const res = await c.call({ method: 'POST', url: '/v1/tokens', payload: { name, scopes } });
      assert.equal(res.statusCode, 201, res.body);
      assert.deepEqual(res.json().scopes, scopes);
      return res.json().token;
    }

    /** A tab at `width` signed in with `token`, on the Locations page; every 403 it meets is kept. */
    async function signIn(width: number, token: string): Promise<{ page: Page; refused: string[] }> {
      const page = await c.browser.newPage({ viewport: { width, height: 844 }, acceptDownloads: true });
      const refused: string[] = [];
      page.on('response', (r) => {
        if (r.status() === 403) refused.push(`${r.request().method()} ${r.url()}`);
      });
      await page.goto(`${c.base}/`);
      await page.getByLabel('API key').fill(token);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Locations', level: 1 }).waitFor();
      return { page, refused };
    }

    /** The names of the write actions the page offers now. */
    async function writesOffered(page: Page): Promise<string[]> {
      const names = await page
        .getByRole('button')
        .evaluateAll((list) => list.map((b) => (b.getAttribute('aria-label') ?? b.textContent ?? '').trim()));
      return names.filter((n) => WRITES.test(n));
    }

    const axe = async (page: Page, state: string) =>
      assert.deepEqual(await axeViolations(page), [], `axe-core on ${state}`);

    for (const width of widths) {
      test(`at ${width} px, a read-only key: every page's data, no write action, the header and the pages it cannot use say which scope is needed`, async () => {
        const { call, bucket, id, label, base, shot } = c;
        // Something on every page: a finished bulk copy, a schedule, a share link, a send for later.
        const copy = await call({
          method: 'POST',
          url: '/v1/copy',
          payload: { from: `${label}:${bucket}/docs${width}/`, to: `${label}:${bucket}/copied${width}/` },
        });
        assert.equal(copy.statusCode, 202, copy.body);
        await waitFor(call, `/v1/jobs/${copy.json().job_id}`);
        const schedule = await call({
          method: 'POST',
          url: '/v1/schedules',
          payload: {
            name: `nightly ${width}`,
            every: 'every day at 02:00',
            action: {
              copy: { from: { id, path: `${bucket}/docs${width}/` }, to: { id, path: `${bucket}/n/` } },
            },
          },
        });
        assert.equal(schedule.statusCode, 201, schedule.body);
        const share = await call({
          method: 'POST',
          url: '/share',
          payload: { file: `${label}/${bucket}/docs${width}/one.txt` },
        });
        assert.equal(share.statusCode, 201, share.body);
        const send = await call({
          method: 'POST',
          url: '/send',
          payload: {
            source: `${label}/${bucket}/docs${width}/two.txt`,
            to: `later${width}@example.com`,
            scheduledAt: 'in 2 days',
          },
        });
        assert.equal(send.statusCode, 202, send.body);

        const { page, refused } = await signIn(width, await keyWith(`reader ${width}`, ['read']));
        try {
          // Locations: listed with their status; no New location, Manage or Refresh; the health stays.
          await page
            .getByRole('row', { name: new RegExp(label) })
            .getByText('active')
            .waitFor();
          assert.deepEqual(await writesOffered(page), []);
          // The header: what the key can do, and one click away why the rest is not offered.
          const why = page.locator('header details.scopes');
          await why.getByText('This key can: read', { exact: true }).click();
          for (const scope of ['transfer', 'remove', 'share', 'admin'])
            await why.getByRole('listitem').filter({ hasText: scope }).first().waitFor();
          await why.getByText(/Other actions need a key with another scope/).waitFor();
          await shot(page, 'scopes-read-locations', width);
          await axe(page, 'locations, read-only, scopes open');
          await page.getByRole('button', { name: `Health of ${label}` }).click();
          await page.getByRole('heading', { name: `${label} (s3)` }).waitFor();
          await page.getByText(/needs an API key with the admin scope/).waitFor();
          assert.deepEqual(await writesOffered(page), []);
          await axe(page, 'a location health, read-only');

          // Browse: the folder's files, downloadable; nothing to upload, select, copy, move, remove, share.
          await page.goto(`${base}/#browse/${id}/${bucket}/docs${width}`);
          await page.getByRole('row', { name: /one\.txt/ }).waitFor();
          await page.getByRole('button', { name: 'Download two.txt' }).waitFor();
          assert.deepEqual(await writesOffered(page), []);
          assert.equal(await page.getByRole('checkbox').count(), 0, 'nothing to select');
          assert.equal(await page.getByLabel('Upload files').count(), 0);
          await shot(page, 'scopes-read-browse', width);
          await axe(page, 'browse, read-only');
          // The bucket store's top level: its buckets, no New bucket.
          await page.goto(`${base}/#browse/${id}`);
          await page.getByRole('link', { name: `${bucket}/` }).waitFor();
          assert.deepEqual(await writesOffered(page), []);

          // Transfers and jobs: the copy with its report; no cancel or retry.
          await page.goto(`${base}/#activity`);
          await page
            .getByRole('button', { name: /^Download report of / })
            .first()
            .waitFor();
          assert.deepEqual(await writesOffered(page), []);
          await axe(page, 'activity, read-only');

          // Sync: a preview is a read and works; neither Sync now nor Run this plan is offered.
          await page.goto(`${base}/#sync`);
          await page.getByText(/needs an API key with the transfer scope/).waitFor();
          await page.getByLabel('Source folder').fill(`${bucket}/docs${width}/`);
          await page.getByLabel('Destination folder').fill(`${bucket}/synced${width}/`);
          await page.getByRole('button', { name: 'Preview', exact: true }).click();
          const plan = page.getByRole('region', { name: 'The plan' });
          await plan.getByText('one.txt').waitFor();
          await plan.getByText(/needs an API key with the transfer scope/).waitFor();
          assert.deepEqual(await writesOffered(page), []);
          await shot(page, 'scopes-read-sync', width);
          await axe(page, 'sync plan, read-only');

          // Schedules: listed; no actions and no form, a sentence naming transfer instead.
          await page.goto(`${base}/#schedules`);
          await page.getByRole('link', { name: `nightly ${width}` }).waitFor();
          await page.getByText(/needs an API key with the transfer scope/).waitFor();
          assert.equal(await page.getByRole('heading', { name: 'New schedule' }).count(), 0);
          assert.deepEqual(await writesOffered(page), []);
          await axe(page, 'schedules, read-only');

          // Shares and sends: listed; no revoke, cancel or send form, a sentence naming share instead.
          await page.goto(`${base}/#shares`);
          await page.getByRole('row', { name: new RegExp(`docs${width}/one\\.txt`) }).waitFor();
          await page.getByText(/needs an API key with the share scope/).waitFor();
          assert.deepEqual(await writesOffered(page), []);
          await axe(page, 'shares, read-only');
          await page.goto(`${base}/#sends`);
          await page
            .getByRole('row', { name: new RegExp(send.json().id) })
            .getByText('scheduled')
            .waitFor();
          await page.getByText(/needs an API key with the share scope/).waitFor();
          assert.equal(await page.getByLabel('To (comma-separated)').count(), 0);
          assert.deepEqual(await writesOffered(page), []);
          await axe(page, 'sends, read-only');

          // Pages it cannot use at all: a sentence naming admin, and no request that would be refused.
          for (const [hash, title] of [
            ['webhooks', 'Webhooks'],
            ['keys', 'API keys'],
          ] as const) {
            await page.goto(`${base}/#${hash}`);
            await page.getByRole('heading', { name: title, level: 1 }).waitFor();
            await page.getByText(/needs an API key with the admin scope/).waitFor();
            assert.deepEqual(await writesOffered(page), []);
            await shot(page, `scopes-read-${hash}`, width);
            await axe(page, `${title}, read-only`);
          }
          assert.deepEqual(refused, [], 'no request of the read-only key was refused');
        } finally {
          await page.close();
        }
      });

      test(`at ${width} px, a key with read and share is offered share and send, not copy, move or remove`, async () => {
        const { bucket, id, base } = c;
        const { page, refused } = await signIn(width, await keyWith(`sharer ${width}`, ['read', 'share']));
        try {
          await page.locator('header details.scopes').getByText('This key can: read, share').waitFor();
          await page.goto(`${base}/#browse/${id}/${bucket}/sel${width}`);
          await page.getByRole('button', { name: 'Share one.txt', exact: true }).waitFor();
          await page.getByRole('button', { name: 'Send one.txt', exact: true }).waitFor();
          assert.deepEqual((await writesOffered(page)).sort(), [
            'Send one.txt',
            'Send pic.bin',
            'Send two.txt',
            'Share one.txt',
            'Share pic.bin',
            'Share two.txt',
          ]);
          // A selection can be shared: it is offered for that alone.
          await page.getByLabel('Select one.txt').check();
          await page.getByRole('button', { name: 'Share selected' }).waitFor();
          assert.equal(await page.getByRole('button', { name: /^(Copy|Move|Remove) selected/ }).count(), 0);
          await axe(page, 'browse, read and share');
          assert.deepEqual(refused, []);
        } finally {
          await page.close();
        }
      });

      test(`at ${width} px, a key with transfer but not remove is not offered "delete what the source lacks" on Sync or in a schedule`, async () => {
        const { base, shot } = c;
        const { page, refused } = await signIn(width, await keyWith(`mover ${width}`, ['read', 'transfer']));
        try {
          for (const [hash, title] of [
            ['sync', 'Sync'],
            ['schedules', 'Schedules'],
          ] as const) {
            await page.goto(`${base}/#${hash}`);
            await page.getByRole('heading', { name: title, level: 1 }).waitFor();
            await page.getByLabel('Compare by').waitFor();
            assert.equal(await page.getByLabel('Delete at the destination what the source lacks').count(), 0);
            await page.getByText(/Not offered: it needs an API key with the remove scope/).waitFor();
            await axe(page, `${title}, a key without remove`);
          }
          await shot(page, 'scopes-no-remove-schedules', width);
          assert.deepEqual(refused, []);
        } finally {
          await page.close();
        }
      });

      test(`at ${width} px, a key limited to one location sees only it; adding a location, webhooks and the audit log say they act on the whole workspace`, async () => {
        const { call, id, label, base, shot } = c;
        // Another location of the workspace, which the key does not see.
        const other = await call({
          method: 'POST',
          url: '/v1/locations',
          payload: {
            provider: 's3',
            label: `elsewhere ${width}`,
            secret: { access_key_id: 'AKID', secret_access_key: 'secret' },
          },
        });
        assert.equal(other.statusCode, 201, other.body);
        const res = await call({
          method: 'POST',
          url: '/v1/tokens',
          payload: { name: `one place ${width}`, locations: [id] },
        });
        assert.equal(res.statusCode, 201, res.body);
        const { page, refused } = await signIn(width, res.json().token);
        try {
          const header = page.locator('header details.scopes');
          await header.getByText(/at 1 location$/).waitFor();
          // Sign out stays on the header's first line, beside the brand, on one line of its own text, at
          // both widths (the longer line of what the key can do once pushed it down).
          for (const w of [1280, 390]) {
            await page.setViewportSize({ width: w, height: 844 });
            const brand = await page.locator('header .brand').boundingBox();
            const out = await page.getByRole('button', { name: 'Sign out' }).boundingBox();
            // The lines its text takes: one box per line (a string: the tests' TypeScript has no DOM types).
            const lines = await page.evaluate<number>(
              "(() => { const r = document.createRange(); r.selectNodeContents(document.querySelector('header > button')); return new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size; })()",
            );
            assert.ok(brand && out, 'the brand and Sign out are shown');
            assert.ok(
              Math.abs(brand.y + brand.height / 2 - (out.y + out.height / 2)) <= 4,
              `at ${w} px, Sign out (y ${out.y}) is on the brand's line (y ${brand.y})`,
            );
            assert.equal(lines, 1, `at ${w} px, Sign out's text is on one line`);
            await shot(page, 'scopes-limited-header', w);
          }
          await page.setViewportSize({ width, height: 844 });
          await page.getByRole('row', { name: new RegExp(label) }).waitFor();
          assert.equal(
            await page.getByText(`elsewhere ${width}`).count(),
            0,
            'the other location is not shown',
          );
          assert.equal(await page.getByRole('button', { name: 'New location' }).count(), 0);
          await header.locator('summary').click();
          await header.getByText(/limited to some locations/).waitFor();
          await axe(page, 'locations, a key limited to one location');
          for (const hash of ['#webhooks', '#audit']) {
            await page.goto(`${base}/${hash}`);
            await page.getByText(/limited to some locations, and .* acts on the whole workspace/).waitFor();
          }
          await page.goto(`${base}/#keys`);
          await page
            .getByRole('row', { name: new RegExp(`one place ${width}`) })
            .getByText(`at ${label} only`, { exact: false })
            .waitFor();
          // It makes keys only where it acts itself: no "Every location", and only its one location.
          const where = page.getByRole('group', { name: 'Where the new key may act' });
          await where.getByLabel('Only the locations ticked').waitFor();
          assert.equal(await where.getByLabel('Only the locations ticked').isChecked(), true);
          assert.equal(await where.getByLabel('Every location').count(), 0);
          assert.equal(await where.getByLabel(`elsewhere ${width}`).count(), 0);
          await page.getByLabel('New key name').fill(`one place too ${width}`);
          await page.getByText('Tick at least one location.').waitFor();
          assert.equal(await page.getByRole('button', { name: 'Create key' }).isDisabled(), true);
          await where.getByLabel(label, { exact: true }).check();
          await page.getByText(`; at ${label} only.`, { exact: false }).waitFor();
          await c.shot(page, 'scopes-keys-limited', width);
          await axe(page, 'keys, a key limited to one location');
          await page.getByRole('button', { name: 'Create key' }).click();
          await page.getByLabel('New API key').waitFor();
          const made = (await call({ method: 'GET', url: '/v1/tokens' })).json() as Array<{
            name: string;
            locations?: string[];
          }>;
          assert.deepEqual(made.find((k) => k.name === `one place too ${width}`)?.locations, [id]);
          assert.deepEqual(refused, [], 'nothing offered was refused');
        } finally {
          await page.close();
        }
      });

      test(`at ${width} px, an admin key creates a key with only read ticked; the list shows each key's scopes; the new key signs in read-only`, async () => {
        const { call, tab, shot, base, id, label } = c;
        const page = await tab(width, '#keys');
        try {
          await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
          // An unlimited key: no scopes line in the header.
          assert.equal(await page.locator('header details.scopes').count(), 0);
          // Every scope of the signed-in key is offered, and only read, the least, is ticked: the form
          // says so.
          const offered = page.getByRole('group', { name: 'What the new key may do' });
          assert.equal(await offered.getByLabel('read', { exact: true }).isChecked(), true, 'read');
          for (const scope of ['transfer', 'remove', 'share', 'admin'])
            assert.equal(await offered.getByLabel(scope, { exact: true }).isChecked(), false, scope);
          await offered.getByText('Only read is ticked to begin with').waitFor();
          await shot(page, 'scopes-keys-form', width);
          await axe(page, 'keys, the form');
          await page.getByLabel('New key name').fill(`viewer ${width}`);
          await page.getByText('It may: read.').waitFor();
          await page.getByRole('button', { name: 'Create key' }).click();
          const token = await page.getByLabel('New API key').inputValue();
          assert.match(token, /^fry_/);
          await page.getByRole('button', { name: 'Done' }).click();
          const row = page.getByRole('row', { name: new RegExp(`viewer ${width}`) });
          await row.getByRole('cell', { name: 'read', exact: true }).waitFor();
          // The key signed in with has all five.
          await page
            .getByRole('row', { name: /^files / })
            .getByRole('cell', { name: 'read, transfer, remove, share, admin', exact: true })
            .waitFor();
          const listed = (await call({ method: 'GET', url: '/v1/tokens' })).json() as Array<{
            name: string;
            scopes: string[];
            locations?: string[];
          }>;
          assert.deepEqual(listed.find((k) => k.name === `viewer ${width}`)?.scopes, ['read']);
          assert.equal(listed.find((k) => k.name === `viewer ${width}`)?.locations, undefined);
          // A key for one location: "Only the locations ticked", then that location.
          const where = page.getByRole('group', { name: 'Where the new key may act' });
          assert.equal(await where.getByLabel('Every location').isChecked(), true);
          await page.getByLabel('New key name').fill(`placed ${width}`);
          for (const scope of ['transfer', 'remove', 'share', 'admin'])
            await offered.getByLabel(scope, { exact: true }).check();
          await where.getByLabel('Only the locations ticked').check();
          await page.getByText('Tick at least one location.').waitFor();
          assert.equal(await page.getByRole('button', { name: 'Create key' }).isDisabled(), true);
          await where.getByLabel(label, { exact: true }).check();
          await page.getByText(`It may: read, transfer, remove, share, admin; at ${label} only.`).waitFor();
          // Each box and radio button beside its label, on one line at either width (on a phone they
          // once took the 44 px height of a field and pushed the label below them).
          const apart = await page.locator('.check').evaluateAll((rows) =>
            rows.map((row) => {
              const input = row.querySelector('input')?.getBoundingClientRect();
              const text = row.querySelector('label')?.getBoundingClientRect();
              if (!input || !text) return `${row.textContent}: no input or label`;
              // (No named function here: the test's compiler would wrap it in a helper the page lacks.)
              const box = Math.round(input.top + input.height / 2);
              const label = Math.round(text.top + text.height / 2);
              return Math.abs(box - label) <= 3 && input.right <= text.left
                ? ''
                : `${row.textContent}: box at ${box}, label at ${label}`;
            }),
          );
          assert.deepEqual(
            apart.filter((a) => a),
            [],
          );
          await shot(page, 'scopes-keys-where', width);
          await axe(page, 'keys, the form with a location ticked');
          await page.getByRole('button', { name: 'Create key' }).click();
          await page.getByRole('button', { name: 'Done' }).click();
          await page
            .getByRole('row', { name: new RegExp(`placed ${width}`) })
            .getByText(`at ${label} only`, { exact: false })
            .waitFor();
          // The form is as it was: every location again.
          assert.equal(await where.getByLabel('Every location').isChecked(), true);
          const placed = (await call({ method: 'GET', url: '/v1/tokens' })).json() as Array<{
            name: string;
            locations?: string[];
          }>;
          assert.deepEqual(placed.find((k) => k.name === `placed ${width}`)?.locations, [id]);
          // With none ticked, nothing can be created.
          for (const scope of ['read', 'transfer', 'remove', 'share', 'admin'])
            await offered.getByLabel(scope, { exact: true }).uncheck();
          assert.equal(await page.getByRole('button', { name: 'Create key' }).isDisabled(), true);
          await shot(page, 'scopes-keys-list', width);
          await axe(page, 'keys, the list with scopes');

          await page.getByRole('button', { name: 'Sign out' }).click();
          await page.getByLabel('API key').fill(token);
          await page.getByRole('button', { name: 'Sign in' }).click();
          await page.getByText('This key can: read', { exact: true }).waitFor();
          await page.goto(`${base}/#keys`);
          await page.getByText(/needs an API key with the admin scope/).waitFor();
        } finally {
          await page.close();
        }
      });
    }
  });
}
