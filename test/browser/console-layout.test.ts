// Every page of the web console fits the screen it is on, on both databases, in chromium: at 390 × 844
// (a phone, on PostgreSQL) and 1280 × 800 (on SQLite; both on each with FERRY_TEST_BROWSER_WIDTHS=all,
// see test/support/browser.ts), in its states (empty, loaded, loading, error), nothing is wider than the
// window (the document's and the body's scrollWidth, and every visible element's right edge) and
// axe-core finds no serious or critical violation. Pages are rows of PAGES: add one as a name, the
// address's hash and what to wait for (and, if it needs them, a workspace, a held request or a click).
// Then the activity and API keys pages used with the keyboard alone, the confirmation before canceling a job included.
// Screenshots at 390 px go to test-artifacts/console/phone-*.png; each page's widths to
// test-artifacts/console/layout-<database>.json.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Browser, Locator, Page } from 'playwright-core';
import { listen } from '../../src/server.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { artifactsDir, axeViolations, browserSkip, launchChromium, widthsOn } from '../support/browser.js';
import { buildConsole } from '../support/console-build.js';
import { testDatabases } from '../support/databases.js';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy.js';
import { closedPort } from '../support/processes.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { TestSmtp } from '../support/smtp.js';
import {
  type Call,
  createLocation,
  newWorkspace,
  s3Client,
  seedBucket,
  waitFor,
} from '../support/transfers.js';
import { waitUntil } from '../support/wait.js';

const skip = browserSkip();

buildConsole();

const WIDTHS: Array<{ width: number; height: number }> = [
  { width: 390, height: 844 },
  { width: 1280, height: 800 },
];

/** A folder three levels deep with long names, and file names of 200 characters. */
const LONG_DIR = [
  'quarterly-reports-for-the-northern-region-and-its-subsidiaries',
  'AnUnbrokenFolderNameWithoutAnyPlaceToBreakItAtAllWhatsoeverReally',
  'drafts and final versions kept for the auditors',
].join('/');
const LONG_FILE = `${'x'.repeat(196)}.pdf`;
const LONG_WORDS = `${'the final version of the report that was sent '.repeat(5).slice(0, 196).trim()}.txt`;

/** What the pages show: made once per database, before the pages are looked at. */
interface World {
  id: string;
  label: string;
  bucket: string;
  down: string;
  /** A webhook's URL, long, at a port nobody answers at. */
  hook: string;
}

interface ConsolePage {
  name: string;
  /** The address's hash, without '#'; '' for the sign-in page. */
  hash: (w: World) => string;
  /** Waits until the page shows the state under test. */
  ready: (page: Page, w: World) => Promise<void>;
  /** The workspace whose key is signed in: 'loaded' (default) has everything, 'empty' nothing; 'none' signs out. */
  as?: 'loaded' | 'empty' | 'none';
  /** A request (URL glob) held unanswered while the page is checked: its loading state. */
  hold?: string;
  /** Done after ready, before the check (`act`, not `then`: an object with `then` is taken for a promise): open a panel, type a wrong key. */
  act?: (page: Page, w: World) => Promise<void>;
}

const heading = (name: string) => (page: Page) => page.getByRole('heading', { name, exact: true }).waitFor();
const text = (s: string | RegExp) => (page: Page) => page.getByText(s).first().waitFor();

export const PAGES: ConsolePage[] = [
  { name: 'signin', as: 'none', hash: () => '', ready: (p) => p.getByLabel('API key').waitFor() },
  {
    name: 'signin-refused',
    as: 'none',
    hash: () => '',
    ready: (p) => p.getByLabel('API key').waitFor(),
    act: async (p) => {
      await p.getByLabel('API key').fill('fry_wrong');
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.getByRole('alert').waitFor();
    },
  },
  { name: 'locations-empty', as: 'empty', hash: () => 'locations', ready: text(/^No locations yet/) },
  { name: 'locations-loading', hash: () => 'locations', hold: '**/v1/locations', ready: text('Loading…') },
  {
    name: 'locations',
    hash: () => 'locations',
    ready: (p, w) => p.getByRole('link', { name: w.down }).waitFor(),
  },
  {
    name: 'browse-buckets',
    hash: (w) => `browse/${w.id}`,
    ready: (p, w) => p.getByRole('link', { name: `${w.bucket}/` }).waitFor(),
  },
  {
    name: 'browse-loading',
    hash: (w) => `browse/${w.id}/${w.bucket}`,
    hold: '**/v1/list',
    ready: text('Loading…'),
  },
  {
    name: 'browse-folder',
    hash: (w) => `browse/${w.id}/${w.bucket}/in`,
    ready: (p) => p.getByRole('row', { name: /k5\.txt/ }).waitFor(),
  },
  {
    name: 'browse-long',
    hash: (w) => `browse/${w.id}/${w.bucket}/${LONG_DIR}`,
    ready: (p) => p.getByRole('row', { name: new RegExp(LONG_FILE) }).waitFor(),
  },
  {
    name: 'browse-empty-folder',
    hash: (w) => `browse/${w.id}/${w.bucket}/nothing-here`,
    ready: async (p) => {
      await p.getByRole('heading', { name: /^Browse/ }).waitFor();
      await p.getByText('Loading…').waitFor({ state: 'detached' });
    },
  },
  {
    name: 'browse-store-down',
    hash: (w) => `browse/${w.down}`,
    ready: (p) => p.getByRole('alert').waitFor(),
  },
  {
    name: 'copy-panel',
    hash: (w) => `browse/${w.id}/${w.bucket}/${LONG_DIR}`,
    ready: (p) => p.getByRole('row', { name: new RegExp(LONG_FILE) }).waitFor(),
    act: async (p) => {
      await p.getByRole('button', { name: `Copy ${LONG_FILE}`, exact: true }).click();
      await p.getByLabel('Destination path').waitFor();
    },
  },
  {
    name: 'copy-folder-panel',
    hash: (w) => `browse/${w.id}/${w.bucket}`,
    ready: (p) => p.getByRole('button', { name: 'Copy in', exact: true }).waitFor(),
    act: async (p) => {
      await p.getByRole('button', { name: 'Copy in', exact: true }).click();
      await p.getByLabel(/Manifest/).waitFor();
    },
  },
  {
    name: 'move-preview',
    hash: (w) => `browse/${w.id}/${w.bucket}/${LONG_DIR}`,
    ready: (p) => p.getByRole('row', { name: new RegExp(LONG_WORDS) }).waitFor(),
    act: async (p, w) => {
      await p.getByRole('button', { name: `Move ${LONG_WORDS}`, exact: true }).click();
      await p.getByLabel('Destination folder').fill(`${w.bucket}/${LONG_DIR}/elsewhere`);
      await p.getByRole('button', { name: 'Preview move', exact: true }).click();
      await p.getByText('This entry would be moved').waitFor();
    },
  },
  {
    name: 'remove-preview',
    hash: (w) => `browse/${w.id}/${w.bucket}/${LONG_DIR}`,
    ready: (p) => p.getByRole('row', { name: new RegExp(LONG_FILE) }).waitFor(),
    act: async (p) => {
      await p.getByRole('button', { name: `Remove ${LONG_FILE}`, exact: true }).click();
      await p.getByRole('button', { name: 'Preview removal', exact: true }).click();
      await p.getByText('This entry would be removed').waitFor();
    },
  },
  {
    name: 'share-panel',
    hash: (w) => `browse/${w.id}/${w.bucket}/${LONG_DIR}`,
    ready: (p) => p.getByRole('row', { name: new RegExp(LONG_FILE) }).waitFor(),
    act: async (p) => {
      await p.getByRole('button', { name: `Share ${LONG_FILE}`, exact: true }).click();
      await p.getByRole('button', { name: 'Create link' }).waitFor();
    },
  },
  { name: 'activity-empty', as: 'empty', hash: () => 'activity', ready: text('No jobs yet.') },
  {
    name: 'activity',
    hash: () => 'activity',
    ready: (p) => p.locator('li.job').filter({ hasText: 'partial' }).first().waitFor(),
    act: async (p) => {
      await p.getByRole('button', { name: 'Show 1 failure' }).first().click();
      await p.getByRole('button', { name: 'Retry failed objects' }).first().waitFor();
    },
  },
  { name: 'shares-empty', as: 'empty', hash: () => 'shares', ready: heading('Shares') },
  {
    name: 'shares',
    hash: () => 'shares',
    ready: (p) =>
      p
        .getByRole('row', { name: new RegExp(LONG_FILE) })
        .first()
        .waitFor(),
  },
  {
    name: 'shares-downloads',
    hash: () => 'shares',
    ready: (p) =>
      p
        .getByRole('button', { name: new RegExp(`^Downloads of .*${LONG_FILE}$`) })
        .first()
        .waitFor(),
    act: async (p) => {
      await p
        .getByRole('button', { name: new RegExp(`^Downloads of .*${LONG_FILE}$`) })
        .first()
        .click();
      await p.getByText('No downloads yet.').waitFor();
    },
  },
  { name: 'sends-empty', as: 'empty', hash: () => 'sends', ready: heading('Sends') },
  {
    name: 'sends',
    hash: () => 'sends',
    ready: (p) => p.getByRole('cell').getByText('scheduled', { exact: true }).first().waitFor(),
  },
  { name: 'webhooks-empty', as: 'empty', hash: () => 'webhooks', ready: text('No webhooks yet.') },
  {
    name: 'webhooks',
    hash: () => 'webhooks',
    ready: (p, w) => p.getByRole('row', { name: new RegExp(w.hook) }).waitFor(),
    act: async (p, w) => {
      await p.getByRole('button', { name: `Deliveries to ${w.hook}` }).click();
      await p.getByRole('heading', { name: /^Deliveries to/ }).waitFor();
    },
  },
  {
    name: 'keys',
    hash: () => 'keys',
    ready: (p) =>
      p
        .getByRole('row', { name: /layout/ })
        .first()
        .waitFor(),
  },
  { name: 'audit-loading', hash: () => 'audit', hold: '**/v1/audit**', ready: text('Loading…') },
  {
    name: 'audit',
    hash: () => 'audit',
    ready: (p) => p.getByRole('cell', { name: 'share.create', exact: true }).first().waitFor(),
  },
  {
    name: 'audit-filtered',
    hash: () => 'audit',
    ready: (p) => p.getByRole('cell', { name: 'share.create', exact: true }).first().waitFor(),
    act: async (p) => {
      await p.getByLabel('Action', { exact: true }).selectOption('webhook.create');
      await p.getByRole('cell', { name: 'webhook.create', exact: true }).waitFor();
    },
  },
];

/**
 * How wide the page is against the window: the document's and the body's scrollWidth, and the visible
 * elements whose right edge (within what their scrolling ancestors show) is past the window's. Run in
 * the page (a string: the server's TypeScript has no DOM types).
 */
const MEASURE = `(() => {
  const width = window.innerWidth;
  const describe = (el) => {
    const id = el.id ? '#' + el.id : '';
    const cls = typeof el.className === 'string' && el.className ? '.' + el.className.trim().split(/ +/).join('.') : '';
    const label = el.getAttribute('aria-label') ?? (el.textContent ?? '').trim().slice(0, 30);
    return el.tagName.toLowerCase() + id + cls + ' "' + label + '"';
  };
  const offenders = [];
  for (const el of document.querySelectorAll('body *')) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    if (getComputedStyle(el).visibility !== 'visible') continue;
    // What an ancestor that scrolls or clips its content lets show of the element.
    let right = box.right;
    for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
      if (getComputedStyle(up).overflowX !== 'visible') right = Math.min(right, up.getBoundingClientRect().right);
    }
    if (right > width + 0.5) offenders.push(describe(el) + ' ends at ' + Math.round(right) + ' px');
  }
  // Text that runs out of its box (a long name that does not wrap) moves no element's edge.
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!node.textContent.trim() || !parent || parent.closest('.sr-only, script, style, option')) continue;
    range.selectNodeContents(node);
    let right = 0;
    for (const r of range.getClientRects()) right = Math.max(right, r.right);
    for (let up = parent; up && up !== document.body; up = up.parentElement) {
      if (getComputedStyle(up).overflowX !== 'visible') right = Math.min(right, up.getBoundingClientRect().right);
    }
    if (right > width + 0.5) offenders.push('text in ' + describe(parent) + ' ends at ' + Math.round(right) + ' px');
  }
  return { width, document: document.documentElement.scrollWidth, body: document.body.scrollWidth, offenders };
})()`;

interface Measured {
  width: number;
  document: number;
  body: number;
  offenders: string[];
}

const focused = (target: Locator) => target.evaluate((el) => el === el.ownerDocument.activeElement);

/**
 * Whether `target` comes to have the focus: a focus moved by the console's effect lands after the
 * render that shows the dialog, which a loaded machine can run after the test's next look. The focus
 * is looked at until it is there; the time limit only ends a test that would otherwise hang (false).
 */
async function settlesOn(target: Locator): Promise<boolean> {
  return waitUntil(() => focused(target), { what: 'the focus', pauseMs: 50 }).then(
    () => true,
    () => false,
  );
}

/** Presses Tab until `target` has the focus (at most `max` times); fails naming what had it. */
async function tabTo(page: Page, target: Locator, max = 80): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    if (await focused(target)) return;
  }
  const at = await page.evaluate('document.activeElement?.outerHTML.slice(0, 120)');
  assert.fail(`Tab never reached the target; the focus is on ${at}`);
}

/** The focused element draws a visible focus ring. */
async function focusVisible(page: Page): Promise<void> {
  const outline = await page.evaluate<string>(
    '(() => { const s = getComputedStyle(document.activeElement); return s.outlineStyle + " " + s.outlineWidth; })()',
  );
  assert.match(outline, /^solid [1-9]/, `the focus ring: ${outline}`);
}

const databases = await testDatabases();
const widthsByDatabase = new Map(
  await Promise.all(databases.map(async (d) => [d.name, await widthsOn(d)] as const)),
);
// The two databases side by side, each with its own server, store and browser: one after the other they
// can outlast the runner's time for a file on a busy machine.
describe('the console on every page, at every width', { concurrency: databases.length }, () => {
  for (const database of databases) {
    // One width on each database, both in all (test/support/browser.ts, widthsOn): the sizes this one checks.
    const sizes = WIDTHS.filter((size) => widthsByDatabase.get(database.name)?.includes(size.width));
    describe(`the console's layout in chromium [${database.name}]`, {
      skip: skip ?? database.skip ?? false,
      // Its own tests one at a time (they share its tabs), not the two at a time it would inherit.
      concurrency: 1,
    }, () => {
      let t: TestApp;
      let s3: S3rverHandle;
      let smtp: TestSmtp;
      let proxy: FaultProxy;
      let client: S3Client;
      let browser: Browser;
      let base: string;
      let call: Call;
      const tokens: Record<'loaded' | 'empty', string> = { loaded: '', empty: '' };
      const world: World = { id: '', label: '', bucket: '', down: '', hook: '' };
      const widths: Record<string, Record<number, number>> = {};
      const shots = artifactsDir('console');

      before(async () => {
        s3 = await startS3rver();
        proxy = await startFaultProxy(s3.endpoint);
        smtp = await new TestSmtp().start();
        client = s3Client(s3.endpoint);
        t = await startTestApp(database, {
          env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32', FERRY_PORT: '0', FERRY_SMTP_URL: smtp.url },
          worker: true,
        });
        // On a port of the system's choice, which the links it makes then name.
        base = await listen(t.app, t.config);
        call = await newWorkspace(t);
        tokens.loaded = (
          await call({ method: 'POST', url: '/v1/tokens', payload: { name: 'layout' } })
        ).json().token;
        const empty = await newWorkspace(t);
        tokens.empty = (
          await empty({ method: 'POST', url: '/v1/tokens', payload: { name: 'empty' } })
        ).json().token;
        const s3Secret = { access_key_id: 'AKID', secret_access_key: 'secret' };
        const loc = await createLocation(call, {
          provider: 's3',
          secret: s3Secret,
          metadata: { endpoint: s3.endpoint },
        });
        // A store nobody answers at: its listing fails.
        const closed = await closedPort();
        const down = await createLocation(call, {
          provider: 's3',
          secret: s3Secret,
          metadata: { endpoint: `http://127.0.0.1:${closed}` },
        });
        const objects: Record<string, string> = {};
        for (let i = 0; i < 6; i++) objects[`in/k${i}.txt`] = `object ${i} `.repeat(200);
        objects[`${LONG_DIR}/${LONG_FILE}`] = 'long';
        objects[`${LONG_DIR}/${LONG_WORDS}`] = 'words';
        const bucket = await seedBucket(client, objects);
        Object.assign(world, { id: loc.id, label: loc.label, bucket, down: down.label });
        world.hook = `http://127.0.0.1:${closed}/hooks/${'a-rather-long-path-segment-'.repeat(6)}receiver`;
        const hook = await call({
          method: 'POST',
          url: '/v1/webhooks',
          payload: { url: world.hook, events: ['job.complete', 'job.partial', 'transfer.failed'] },
        });
        assert.equal(hook.statusCode, 201, hook.body);

        // A job complete, one partial (a key of its manifest is missing), a transfer failed.
        const copy = async (body: Record<string, unknown>) => {
          const res = await call({ method: 'POST', url: '/v1/copy', payload: body });
          assert.equal(res.statusCode, 202, res.body);
          return waitFor(call, `/v1/jobs/${res.json().job_id}`);
        };
        const at = (path: string) => `${loc.label}:${bucket}/${path}`;
        assert.equal(
          (await copy({ from: at(`${LONG_DIR}/`), to: at(`${LONG_DIR}-copy/`) })).status,
          'complete',
        );
        const partial = await copy({ from: at('in/'), to: at('again/'), manifest: ['k0.txt', 'late.txt'] });
        assert.equal(partial.status, 'partial');
        const removed = await call({
          method: 'POST',
          url: '/remove',
          payload: {
            path: [`${loc.label}/${bucket}/in/k1.txt`, `${loc.label}/${bucket}/in/gone-${LONG_WORDS}`],
          },
        });
        assert.equal(removed.statusCode, 202, removed.body);
        assert.equal((await waitFor(call, `/v1/transfers/${removed.json().id}`)).status, 'failed');
        const shared = await call({
          method: 'POST',
          url: '/share',
          payload: {
            file: `${loc.label}/${bucket}/${LONG_DIR}/${LONG_FILE}`,
            max_downloads: 3,
            expires_at: new Date(Date.now() + 7 * 86_400_000).toISOString(),
          },
        });
        assert.equal(shared.statusCode, 201, shared.body);
        const sent = await call({
          method: 'POST',
          url: '/send',
          payload: {
            source: `${loc.label}/${bucket}/${LONG_DIR}/${LONG_WORDS}`,
            to: ['someone.with.a.long.address@example.com', 'another@example.com'],
            scheduledAt: 'in 3 days',
          },
        });
        assert.equal(sent.statusCode, 202, sent.body);
        browser = await launchChromium();
      });
      after(async () => {
        writeFileSync(join(shots, `layout-${database.name}.json`), `${JSON.stringify(widths, null, 1)}\n`);
        await browser?.close();
        await t?.close();
        client?.destroy();
        await proxy?.close();
        await s3?.close();
        await smtp?.close();
      });

      // Tabs signed in once, one per workspace and width ('none' never signs in).
      const tabs = new Map<string, Page>();
      const tab = async (as: 'loaded' | 'empty' | 'none', size: { width: number; height: number }) => {
        const open = tabs.get(`${as} ${size.width}`);
        if (open) return open;
        const page = await browser.newPage({ viewport: size });
        page.on('dialog', (d) => void d.dismiss());
        if (as !== 'none') {
          await page.goto(`${base}/`);
          await page.getByLabel('API key').fill(tokens[as]);
          await page.getByRole('button', { name: 'Sign in' }).click();
          await page.getByRole('heading', { name: 'Locations' }).waitFor();
        }
        tabs.set(`${as} ${size.width}`, page);
        return page;
      };
      after(async () => {
        for (const page of tabs.values()) await page.close();
      });
      let loads = 0;

      /** What is wrong with the page at one size, in words; nothing when it fits and axe is content. */
      const check = async (p: ConsolePage, size: { width: number; height: number }): Promise<string[]> => {
        const page = await tab(p.as ?? 'loaded', size);
        let release = () => {};
        const held = new Promise<void>((resolve) => {
          release = resolve;
        });
        if (p.hold)
          await page.route(p.hold, async (route) => {
            await held;
            await route.continue().catch(() => {});
          });
        try {
          // A fresh load each time (another address, the same page): nothing is left from the page before.
          await page.goto(`${base}/?load=${++loads}#${p.hash(world)}`);
          await p.ready(page, world);
          await p.act?.(page, world);
          const m = await page.evaluate<Measured>(MEASURE);
          widths[p.name] = { ...widths[p.name], [size.width]: Math.max(m.document, m.body) };
          if (size.width === 390)
            await page.screenshot({
              path: join(shots, `phone-${p.name}-${database.name}.png`),
              fullPage: true,
            });
          const wrong: string[] = [];
          if (m.document > m.width || m.body > m.width)
            wrong.push(`scrollWidth ${m.document} (document), ${m.body} (body) > ${m.width}`);
          if (m.offenders.length > 0)
            wrong.push(`past the right edge: ${m.offenders.slice(0, 12).join('; ')}`);
          const axe = await axeViolations(page);
          if (axe.length > 0) wrong.push(`axe: ${axe.join(', ')}`);
          return wrong.map((w) => `at ${size.width} px, ${w}`);
        } finally {
          release();
          if (p.hold) await page.unroute(p.hold);
        }
      };

      for (const p of PAGES) {
        test(`${p.name} fits ${sizes.map((w) => `${w.width} × ${w.height}`).join(' and ')}, and axe finds nothing`, async () => {
          // The sizes at once, each in its own tab: half the time of one after the other.
          const wrong = (await Promise.all(sizes.map((size) => check(p, size)))).flat();
          assert.deepEqual(wrong, []);
        });
      }

      test('the activity page by keyboard alone: failures shown and hidden, retried, and a job canceled after its confirmation', async () => {
        // A job whose listing the store holds: it stays planning until the test lets the store answer.
        let answer = () => {};
        const listing = new Promise<void>((resolve) => {
          answer = resolve;
        });
        const slow = await createLocation(call, {
          provider: 's3',
          secret: { access_key_id: 'AKID', secret_access_key: 'secret' },
          metadata: { endpoint: proxy.url },
        });
        proxy.dropNext(1, listing);
        const started = await call({
          method: 'POST',
          url: '/v1/copy',
          payload: { from: `${slow.label}:${world.bucket}/in/`, to: `${slow.label}:${world.bucket}/held/` },
        });
        assert.equal(started.statusCode, 202, started.body);
        const jobId: string = started.json().job_id;
        const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
        try {
          await page.goto(`${base}/`);
          await page.getByLabel('API key').focus();
          await page.keyboard.type(tokens.loaded);
          await page.keyboard.press('Enter');
          await page.getByRole('heading', { name: 'Locations' }).waitFor();
          // To the page through the navigation.
          await tabTo(page, page.getByRole('link', { name: 'Transfers and jobs' }));
          await focusVisible(page);
          await page.keyboard.press('Enter');
          await page.getByRole('heading', { name: 'Transfers and jobs' }).waitFor();

          const partial = page.locator('li.job').filter({
            hasText: `${world.label}:${world.bucket}/in/ → ${world.label}:${world.bucket}/again/`,
          });
          const show = partial.getByRole('button', { name: 'Show 1 failure' });
          await tabTo(page, show);
          await focusVisible(page);
          await page.keyboard.press('Enter');
          await partial.getByRole('row', { name: /late\.txt/ }).waitFor();
          await page.keyboard.press('Space');
          assert.equal(
            await partial.getByRole('row', { name: /late\.txt/ }).count(),
            0,
            'Space hides them again',
          );
          await page.keyboard.press('Enter');
          const retry = partial.getByRole('button', { name: 'Retry failed objects' });
          await tabTo(page, retry);
          await focusVisible(page);
          await page.keyboard.press('Enter');
          await partial.getByText('Retry failed objects').waitFor({ state: 'detached' });

          const held = page.locator('li.job').filter({ hasText: `${world.bucket}/held/` });
          const cancel = held.getByRole('button', { name: /^Cancel/ });
          await tabTo(page, cancel);
          await focusVisible(page);
          await page.keyboard.press('Enter');
          const dialog = page.getByRole('alertdialog', {
            name: 'Cancel this job? Objects already copied stay.',
          });
          await dialog.waitFor();
          await page.screenshot({
            path: join(shots, `phone-cancel-confirm-${database.name}.png`),
            fullPage: true,
          });
          assert.deepEqual(await axeViolations(page), []);
          // Escape keeps the job, and the focus goes back to Cancel.
          assert.ok(await settlesOn(dialog.getByRole('button', { name: 'Keep' })), 'the focus is on Keep');
          await page.keyboard.press('Escape');
          await dialog.waitFor({ state: 'detached' });
          assert.ok(await settlesOn(cancel), 'the focus is back on Cancel');
          assert.notEqual(
            (await call({ method: 'GET', url: `/v1/jobs/${jobId}` })).json().status,
            'canceled',
          );
          // Keep, by Space: the same.
          await page.keyboard.press('Space');
          await dialog.waitFor();
          assert.ok(await settlesOn(dialog.getByRole('button', { name: 'Keep' })), 'the focus is on Keep');
          await page.keyboard.press('Space');
          await dialog.waitFor({ state: 'detached' });
          assert.ok(await settlesOn(cancel), 'the focus is back on Cancel');
          // Confirm, reached by Shift+Tab from Keep.
          await page.keyboard.press('Enter');
          await dialog.waitFor();
          assert.ok(await settlesOn(dialog.getByRole('button', { name: 'Keep' })), 'the focus is on Keep');
          await page.keyboard.press('Shift+Tab');
          assert.ok(
            await settlesOn(dialog.getByRole('button', { name: 'Confirm' })),
            'the focus is on Confirm',
          );
          await focusVisible(page);
          await page.keyboard.press('Enter');
          await held.getByText('canceled', { exact: true }).waitFor();
          assert.equal((await call({ method: 'GET', url: `/v1/jobs/${jobId}` })).json().status, 'canceled');
          assert.equal(await held.getByRole('button', { name: /^Cancel/ }).count(), 0);
        } finally {
          answer();
          await page.close();
        }
      });

      test('the API keys page by keyboard alone: create (the new key takes the focus, Escape gives it back), rename, revoke', async () => {
        const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
        try {
          await page.goto(`${base}/`);
          await page.getByLabel('API key').focus();
          await page.keyboard.type(tokens.empty);
          await page.keyboard.press('Enter');
          await page.getByRole('heading', { name: 'Locations' }).waitFor();
          await tabTo(page, page.getByRole('link', { name: 'API keys' }));
          await page.keyboard.press('Enter');
          const name = page.getByLabel('New key name');
          await tabTo(page, name);
          await focusVisible(page);
          await page.keyboard.type('typed key');
          await page.keyboard.press('Enter');
          const made = page.getByLabel('New API key');
          await made.waitFor();
          assert.ok(await focused(made), 'the new key has the focus');
          assert.match(await made.inputValue(), /^fry_/);
          await page.keyboard.press('Escape');
          await made.waitFor({ state: 'detached' });
          assert.ok(await focused(name), 'the focus is back on the name field');

          const row = page.getByRole('row', { name: /typed key/ });
          await tabTo(page, row.getByRole('button', { name: 'Rename typed key' }));
          await focusVisible(page);
          page.once('dialog', (d) => void d.accept('renamed by keyboard'));
          await page.keyboard.press('Enter');
          const renamed = page.getByRole('row', { name: /renamed by keyboard/ });
          await renamed.waitFor();
          await tabTo(page, renamed.getByRole('button', { name: 'Revoke renamed by keyboard' }));
          page.once('dialog', (d) => void d.accept());
          await page.keyboard.press('Space');
          await renamed.getByText(/^revoked/).waitFor();
        } finally {
          await page.close();
        }
      });
    });
  }
});
