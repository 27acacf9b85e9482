// The console's audit log and a share link's downloads (docs/console.md, "Audit log" and "Shares"), in
// chromium on both databases against s3rver, at 1280 px (SQLite) and 390 px (PostgreSQL): a key with
// admin sees the events that API calls made (a location, a key, renames), newest first with the key's
// name, the address and the user agent, a target that is a location or a key by its label or name, filters them by action (the select lists the actions of
// /openapi.json) and by key, and pages through them with Show more; a read-only key sees a sentence
// naming admin and makes no request for the log; a share link's downloads (time, address, bytes,
// completed) open from its row after a download of the link, and the download is in the log. The page
// is no wider than the window, and axe-core in each state; screenshots in test-artifacts/console/.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { axeViolations, browserSkip, widthsOn } from '../support/browser.js';
import { buildConsole, type ConsoleFiles, startConsoleFiles } from '../support/console-files.js';
import { testDatabases } from '../support/databases.js';
import { createLocation } from '../support/transfers.js';
import { waitUntil } from '../support/wait.js';

const skip = browserSkip();
buildConsole();

/** The user agent the test's API calls give, to be read back in the log. */
const AGENT = 'audit-test/1.0 (console)';

for (const database of await testDatabases()) {
  const widths = await widthsOn(database);
  describe(`console audit log and share downloads in chromium [${database.name}]`, {
    skip: skip ?? database.skip ?? false,
  }, () => {
    let c: ConsoleFiles;
    before(async () => {
      c = await startConsoleFiles(database);
    });
    after(async () => {
      await c?.close();
    });

    /** A key of this workspace with only `scopes`: its id and token. */
    async function keyWith(name: string, scopes: string[]): Promise<{ id: string; token: string }> {
      const res = await c.call({
        method: 'POST',
        url: '/v1/tokens',
        payload: { name, scopes },
        headers: { 'user-agent': AGENT },
      });
      assert.equal(res.statusCode, 201, res.body);
      return { id: res.json().id, token: res.json().token };
    }

    /** A tab at `width` signed in with `token`, on `hash`; every request path it makes is kept. */
    async function signIn(
      width: number,
      token: string,
      hash: string,
    ): Promise<{ page: Page; asked: string[] }> {
      const page = await c.browser.newPage({ viewport: { width, height: 844 } });
      const asked: string[] = [];
      page.on('request', (r) => asked.push(`${r.method()} ${new URL(r.url()).pathname}`));
      await page.goto(`${c.base}/`);
      await page.getByLabel('API key').fill(token);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Locations', level: 1 }).waitFor();
      await page.goto(`${c.base}/#${hash}`);
      return { page, asked };
    }

    const axe = async (page: Page, state: string) =>
      assert.deepEqual(await axeViolations(page), [], `axe-core on ${state}`);

    /** The page is no wider than the window (as test/browser/console-layout.test.ts measures it). */
    async function fits(page: Page, state: string) {
      const m = await page.evaluate<{ width: number; document: number; body: number }>(
        '({ width: window.innerWidth, document: document.documentElement.scrollWidth, body: document.body.scrollWidth })',
      );
      assert.ok(m.document <= m.width && m.body <= m.width, `${state}: ${JSON.stringify(m)}`);
    }

    /** The audit table's body rows (not the filters, not a nested table). */
    const eventRows = (page: Page) => page.locator('table.audit > tbody > tr');
    const cell = (page: Page, row: number, label: string) =>
      eventRows(page).nth(row).locator(`td[data-label="${label}"]`);

    /** Waits until the number of event rows passes `ok` (page.waitForFunction would evaluate a string, which the console's CSP refuses). */
    async function rowsUntil(page: Page, ok: (n: number) => boolean): Promise<void> {
      let n = 0;
      await waitUntil(
        async () => {
          n = await eventRows(page).count();
          return ok(n);
        },
        { what: 'the event rows to change', pauseMs: 50, detail: () => `${n} event rows, still` },
      );
    }

    for (const width of widths) {
      test(`at ${width} px, an admin key reads the events API calls made, newest first, filtered by action and key, with Show more`, async () => {
        const { call, t, shot } = c;
        const headers = { 'user-agent': AGENT };
        // The API calls: a location (by the workspace's own key), a key with read and admin, and that key
        // making a key of its own; then 55 renames, more than a page.
        const loc = await createLocation((o) => call({ ...o, headers }), {
          provider: 's3',
          secret: { access_key_id: 'AKID', secret_access_key: 'secret' },
          metadata: { endpoint: 'http://127.0.0.1:9' },
          label: `audited-${width}`,
        });
        const auditor = await keyWith(`auditor ${width}`, ['read', 'admin']);
        const made = await t.request({
          method: 'POST',
          url: '/v1/tokens',
          payload: { name: `made by auditor ${width}`, scopes: ['read'] },
          headers,
          token: auditor.token,
        });
        assert.equal(made.statusCode, 201, made.body);
        for (let i = 0; i < 55; i++) {
          const renamed = await call({
            method: 'PATCH',
            url: `/v1/tokens/${made.json().id}`,
            payload: { name: `made by auditor ${width} #${i}` },
            headers,
          });
          assert.equal(renamed.statusCode, 204, renamed.body);
        }
        // The last change, so the newest event: a key made by the workspace's key.
        const last = await keyWith(`last ${width}`, ['read']);

        const { page, asked } = await signIn(width, auditor.token, 'audit');
        try {
          await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();
          await page.getByRole('link', { name: 'Audit log' }).waitFor();
          // Newest first: the last key's creation, by the workspace's key 'test', with address and agent.
          await eventRows(page).first().waitFor();
          assert.equal(await cell(page, 0, 'Action').textContent(), 'key.create');
          // The target by the key's name (its id one hover away), as a location's is by its label.
          assert.equal(await cell(page, 0, 'Target').textContent(), `last ${width}`);
          assert.equal(await cell(page, 0, 'Target').getAttribute('title'), last.id);
          assert.equal(await cell(page, 0, 'Status').textContent(), '201');
          assert.equal(await cell(page, 0, 'Key').textContent(), 'test');
          assert.equal(await cell(page, 0, 'Address').textContent(), '127.0.0.1');
          assert.equal(await cell(page, 0, 'User agent').textContent(), AGENT);
          // The time in the browser's zone, as the other pages write it.
          const api = (await call({ method: 'GET', url: '/v1/audit?limit=1' })).json() as {
            events: Array<{ id: string; at: string }>;
          };
          const local = await page.evaluate<string>(
            `new Date(${JSON.stringify(api.events[0]?.at)}).toLocaleString()`,
          );
          assert.equal(await eventRows(page).first().locator('th').textContent(), local);
          assert.equal(await eventRows(page).count(), 50, 'a page of 50');
          await shot(page, 'audit', width);
          await fits(page, 'the audit log');
          await axe(page, 'the audit log');

          // Show more follows next_cursor: the next events are added under the first page.
          await page.getByRole('button', { name: 'Show more' }).click();
          await rowsUntil(page, (n) => n > 50);
          const all = await eventRows(page).count();
          assert.ok(all > 50 && all <= 100, `${all} rows after Show more`);

          // The actions offered are the API's own (/openapi.json), every one of docs/api.md's.
          const action = page.getByLabel('Action', { exact: true });
          const offered = await action.locator('option').allTextContents();
          for (const a of ['location.create', 'key.create', 'key.update', 'share.download', 'auth.refused'])
            assert.ok(offered.includes(a), `${a} offered: ${offered.join(', ')}`);
          const doc = (await call({ method: 'GET', url: '/openapi.json' })).json() as {
            paths: Record<
              string,
              { get: { parameters: Array<{ name: string; schema: { enum: string[] } }> } }
            >;
          };
          const listed = doc.paths['/v1/audit']?.get.parameters.find((p) => p.name === 'action')?.schema.enum;
          assert.deepEqual(offered, ['Any action', ...(listed ?? [])]);

          // By action: location.create shows the location made above, and nothing of another action.
          await action.selectOption('location.create');
          await page
            .locator('table.audit td[data-label="Target"]')
            .getByText(`audited-${width}`, { exact: true })
            .waitFor();
          assert.doesNotMatch(await page.locator('table.audit').innerText(), new RegExp(loc.id));
          const actions = await page.locator('table.audit td[data-label="Action"]').allTextContents();
          assert.ok(actions.length >= 1);
          assert.deepEqual(new Set(actions), new Set(['location.create']));
          assert.equal(await page.getByRole('button', { name: 'Show more' }).count(), 0);
          await fits(page, 'filtered by action');
          await axe(page, 'filtered by action');

          // By key: the auditor key made one change, the key of its own.
          await action.selectOption('');
          await page.getByLabel('Key', { exact: true }).selectOption({ label: `auditor ${width}` });
          await rowsUntil(page, (n) => n === 1);
          assert.equal(await cell(page, 0, 'Action').textContent(), 'key.create');
          assert.equal(await cell(page, 0, 'Key').textContent(), `auditor ${width}`);
          assert.equal(await cell(page, 0, 'Target').textContent(), `made by auditor ${width} #54`);
          await shot(page, 'audit-by-key', width);
          // Both: nothing of that key is a location.
          await action.selectOption('location.create');
          await page.getByText('No events match these filters.').waitFor();
          await shot(page, 'audit-filtered', width);
          await axe(page, 'no event matches');
          assert.ok(asked.includes('GET /openapi.json'), 'the actions were read from /openapi.json');
        } finally {
          await page.close();
        }
      });

      test(`at ${width} px, a read-only key sees that the audit log needs admin, and asks nothing for it`, async () => {
        const reader = await keyWith(`audit reader ${width}`, ['read']);
        const { page, asked } = await signIn(width, reader.token, 'audit');
        try {
          await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();
          await page.getByText(/needs an API key with the admin scope \(to read the audit log\)/).waitFor();
          assert.equal(await page.getByLabel('Action', { exact: true }).count(), 0);
          assert.deepEqual(
            asked.filter((r) => /\/v1\/audit|\/v1\/tokens|\/openapi\.json/.test(r)),
            [],
            'no request for the log, the keys or the actions',
          );
          await c.shot(page, 'audit-read-only', width);
          await fits(page, 'the audit log, read-only');
          await axe(page, 'the audit log, read-only');
        } finally {
          await page.close();
        }
      });

      test(`at ${width} px, a share link's downloads open from its row after a download of the link`, async () => {
        const { call, label, bucket, tab, shot } = c;
        const file = `${label}/${bucket}/docs${width}/two.txt`;
        const share = await call({ method: 'POST', url: '/share', payload: { file } });
        assert.equal(share.statusCode, 201, share.body);
        const { id, url } = share.json() as { id: string; url: string };
        // Another link, never downloaded: its log says so.
        const quiet = await call({
          method: 'POST',
          url: '/share',
          payload: { file: `${label}/${bucket}/docs${width}/one.txt` },
        });
        assert.equal(quiet.statusCode, 201, quiet.body);

        const got = await fetch(url);
        assert.equal(got.status, 200);
        assert.equal(await got.text(), 'second file\n');
        // The row is finished (bytes, completed) when the answer has ended: wait for it through the API.
        await waitUntil(
          async () =>
            (
              (await call({ method: 'GET', url: `/v1/shares/${id}/downloads` })).json() as {
                downloads: Array<{ completed: boolean }>;
              }
            ).downloads[0]?.completed,
          { what: 'the download to be recorded as completed', pauseMs: 100 },
        );

        const page = await tab(width, '#shares');
        try {
          const name = `${bucket}/docs${width}/two.txt`;
          const open = page.getByRole('button', {
            name: new RegExp(`^Downloads of .*${name.replace(/\./g, '\\.')}$`),
          });
          await open.waitFor();
          assert.equal(await open.getAttribute('aria-expanded'), 'false');
          await open.click();
          assert.equal(await open.getAttribute('aria-expanded'), 'true');
          const log = page.locator(`[id="downloads-${id}"]`);
          const row = log.locator('tbody > tr');
          await row.first().waitFor();
          assert.equal(await row.count(), 1);
          assert.equal(await row.first().locator('td[data-label="Address"]').textContent(), '127.0.0.1');
          assert.equal(await row.first().locator('td[data-label="Bytes"]').textContent(), '12 B');
          assert.equal(await row.first().locator('td[data-label="Outcome"]').textContent(), 'completed');
          await shot(page, 'share-downloads', width);
          await fits(page, "a share link's downloads");
          await axe(page, "a share link's downloads");
          // One click closes it; the other link's log has none.
          await open.click();
          assert.equal(await log.count(), 0);
          const other = page.getByRole('button', {
            name: new RegExp(`^Downloads of .*docs${width}/one\\.txt$`),
          });
          await other.first().click();
          await page.locator(`[id="downloads-${quiet.json().id}"]`).getByText('No downloads yet.').waitFor();

          // The download is in the audit log too: share.download, its share, no key.
          await page.goto(`${c.base}/#audit`);
          await page.getByLabel('Action', { exact: true }).selectOption('share.download');
          const event = eventRows(page).filter({ hasText: id });
          await event.waitFor();
          assert.equal(await event.locator('td[data-label="Status"]').textContent(), '200');
          assert.equal(await event.locator('td[data-label="Key"]').textContent(), '—');
        } finally {
          await page.close();
        }
      });
    }
  });
}
