// The console's Locations and Webhooks pages in a real browser (Debian's chromium through playwright-core)
// on both databases, at 1280 and 390 px: an s3 location (s3rver) and an azureblob one (azurite) created
// from the form (the azureblob one by keyboard alone), listed and browsed, renamed, its secret replaced by
// a wrong one (the listing fails with an error in words, its detail one click away) and then the right
// one, and deleted after typing its label; a dropbox location whose refresh the fake token endpoint
// refuses (test/fakes/token-server.ts) shows its health; a webhook created (its secret shown once) gets
// that location's status change at a local receiver, the delivery is listed, a disabled endpoint is
// re-enabled. axe-core on every page and state (empty, loaded, error); screenshots under
// test-artifacts/console/.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import type { Browser, Page } from 'playwright-core';
import { listen } from '../../src/server.js';
import { FakeTokenServer } from '../fakes/token-server.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { AZURITE_ACCOUNT, AZURITE_KEY, type AzuriteHandle, startAzurite } from '../support/azurite.js';
import { artifactsDir, axeViolations, browserSkip, launchChromium, widthsOn } from '../support/browser.js';
import { buildConsole } from '../support/console-build.js';
import { testDatabases } from '../support/databases.js';
import { unique } from '../support/fixtures.js';
import { closedPort } from '../support/processes.js';
import { REJECTED_ACCESS_KEY_ID, type S3rverHandle, startS3rver } from '../support/s3rver.js';
import {
  azureService,
  type Call,
  createLocation,
  newWorkspace,
  s3Client,
  seedBucket,
} from '../support/transfers.js';
import { waitUntil } from '../support/wait.js';
import { Receiver } from '../webhooks/receiver.js';

const skip = browserSkip();

// The console as the source is now, not as some earlier build left it.
buildConsole();

/** Presses Tab until the focused element's text is `text` (at most 80 times). */
async function tabTo(page: Page, text: string): Promise<void> {
  for (let i = 0; i < 80; i++) {
    await page.keyboard.press('Tab');
    if ((await page.evaluate('document.activeElement?.textContent')) === text) return;
  }
  throw new Error(`Tab never reached ${text}`);
}

// The stores, the fake token endpoint, the receiver and the browser do not depend on the database:
// started once for the file.
let s3: S3rverHandle;
let azurite: AzuriteHandle;
let tokens: FakeTokenServer;
let receiver: Receiver;
let client: S3Client;
let browser: Browser;
const shots = artifactsDir('console');

if (!skip) {
  before(async () => {
    [s3, azurite, tokens, receiver, browser] = await Promise.all([
      startS3rver(),
      startAzurite(),
      new FakeTokenServer().start(),
      new Receiver().start(),
      launchChromium(),
    ]);
    client = s3Client(s3.endpoint);
  });
  after(async () => {
    await browser?.close();
    client?.destroy();
    await Promise.all([s3?.close(), azurite?.close(), tokens?.close(), receiver?.close()]);
  });
}

for (const database of await testDatabases()) {
  // One width on each database, both widths in all (test/support/browser.ts, widthsOn).
  const widths = await widthsOn(database);
  describe(`console: locations and webhooks in chromium [${database.name}]`, {
    skip: skip ?? database.skip ?? false,
  }, () => {
    let t: TestApp;
    let base: string;

    before(async () => {
      t = await startTestApp(database, {
        env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32', FERRY_PORT: '0', ...tokens.env() },
        worker: true,
      });
      // On a port of the system's choice, which the links it makes then name.
      base = await listen(t.app, t.config);
    });
    after(async () => {
      await t?.close();
    });

    /** A new workspace, its key, and a tab of `width` signed in with it on the Locations page. */
    async function signedIn(width: number): Promise<{ call: Call; page: Page }> {
      const call = await newWorkspace(t);
      const key = await call({ method: 'POST', url: '/v1/tokens', payload: { name: 'admin' } });
      const page = await browser.newPage({ viewport: { width, height: 844 } });
      page.on('dialog', (d) => void d.accept());
      await page.goto(`${base}/`);
      await page.getByLabel('API key').fill(key.json().token);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Locations', level: 1 }).waitFor();
      return { call, page };
    }

    const shot = (page: Page, name: string, width: number) =>
      page.screenshot({ path: join(shots, `${name}-${width}-${database.name}.png`), fullPage: true });

    const axe = async (page: Page, state: string) =>
      assert.deepEqual(await axeViolations(page), [], `axe-core on ${state}`);

    async function locationsOf(call: Call): Promise<Array<{ id: string; label: string; provider: string }>> {
      const res = await call({ method: 'GET', url: '/v1/locations' });
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    }

    for (const width of widths) {
      test(`at ${width} px, locations: created from the form (azureblob by keyboard alone), listed, renamed, a wrong secret then the right one, deleted after typing the label`, async () => {
        const { call, page } = await signedIn(width);
        const bucket = await seedBucket(client, { 'in/a.txt': 'a' });
        const container = unique('box').toLowerCase();
        await azureService(azurite).createContainer(container);
        try {
          // Empty.
          await page.getByText('No locations yet').waitFor();
          await axe(page, 'the empty Locations page');
          await shot(page, 'locations-empty', width);

          // s3, with the mouse; each provider's form names its fields.
          await page.getByRole('button', { name: 'New location' }).click();
          await page.getByLabel('Provider').selectOption('gcs');
          await page.getByLabel('Service-account key (JSON): key file').waitFor();
          await page.getByLabel('or paste it').fill('{"type":"user"}');
          await page.getByLabel('Label', { exact: true }).fill('key');
          await page.getByRole('button', { name: 'Create location' }).click();
          const refused = page.getByRole('alert').filter({ hasText: 'ferry did not accept that' });
          await refused.waitFor();
          assert.match(await refused.locator('p').first().innerText(), /"type": "service_account"/);
          assert.equal(await page.getByLabel('or paste it').inputValue(), '', 'the secret is cleared');
          await axe(page, 'the create form with an error');
          for (const [provider, fields] of Object.entries({
            dropbox: ['Access token', 'Refresh token', 'Access token expires'],
            onedrive: ['Access token', 'Refresh token', 'Scopes (optional)'],
            r2: ['Access key ID', 'Secret access key', 'Cloudflare account ID', 'Endpoint (optional)'],
            azureblob: ['Storage account name', 'Account key', 'Endpoint (optional)'],
          })) {
            await page.getByLabel('Provider').selectOption(provider);
            for (const field of fields) await page.getByLabel(field, { exact: true }).waitFor();
          }
          // The Azure account's name is no secret and shows as typed; only its key is masked.
          await page.getByLabel('Provider').selectOption('azureblob');
          assert.equal(
            await page.getByLabel('Storage account name', { exact: true }).getAttribute('type'),
            'text',
          );
          assert.equal(
            await page.getByLabel('Account key', { exact: true }).getAttribute('type'),
            'password',
          );
          // A new form: no error left from the refused key file.
          await page.getByRole('button', { name: 'Cancel' }).click();
          await page.getByRole('button', { name: 'New location' }).click();
          assert.equal(await page.getByRole('alert').count(), 0);
          assert.equal(await page.getByLabel('Provider').inputValue(), 's3');
          const s3Label = `s3-${width}`;
          await page.getByLabel('Label', { exact: true }).fill(s3Label);
          await page.getByLabel('Access key ID').fill('AKID');
          await page.getByLabel('Secret access key').fill('very-secret');
          assert.equal(await page.getByLabel('Secret access key').getAttribute('type'), 'password');
          assert.equal(await page.getByLabel('Secret access key').getAttribute('autocomplete'), 'off');
          await page.getByLabel('Endpoint (optional)').fill(s3.endpoint);
          await axe(page, 'the create form');
          await shot(page, 'locations-create', width);
          await page.getByRole('button', { name: 'Create location' }).click();
          await page.getByText(`Location ${s3Label} created.`).waitFor();
          await page
            .getByRole('row', { name: new RegExp(s3Label) })
            .getByText('active')
            .waitFor();

          // azureblob, by keyboard alone.
          await page.locator('body').click({ position: { x: 1, y: 1 } });
          await tabTo(page, 'New location');
          await page.keyboard.press('Enter');
          // The form takes the focus once it has rendered (an effect after the render): wait for it.
          await page.waitForFunction("document.activeElement?.id === 'new-provider'");
          // Typing in a focused select picks the option starting with it.
          await page.keyboard.type('Azure');
          assert.equal(await page.getByLabel('Provider').inputValue(), 'azureblob');
          const azLabel = `az-${width}`;
          await page.keyboard.press('Tab');
          await page.keyboard.type(azLabel);
          await page.keyboard.press('Tab');
          await page.keyboard.type(AZURITE_ACCOUNT);
          await page.keyboard.press('Tab');
          await page.keyboard.type(AZURITE_KEY);
          await page.keyboard.press('Tab');
          await page.keyboard.type(azurite.endpoint);
          await page.keyboard.press('Enter');
          await page.getByText(`Location ${azLabel} created.`).waitFor();
          const made = await locationsOf(call);
          assert.deepEqual(made.map((l) => [l.label, l.provider]).sort(), [
            [azLabel, 'azureblob'],
            [s3Label, 's3'],
          ]);
          await axe(page, 'the Locations page with two locations');
          await shot(page, 'locations', width);

          // Both list through ferry.
          await page.getByRole('link', { name: azLabel }).click();
          await page.getByRole('link', { name: `${container}/` }).waitFor();
          await page.goto(`${base}/#locations`);
          await page.getByRole('link', { name: s3Label }).click();
          await page.getByRole('link', { name: `${bucket}/` }).waitFor();

          // Rename.
          await page.goto(`${base}/#locations`);
          await page.getByRole('button', { name: `Manage ${s3Label}` }).click();
          const renamed = `photos-${width}`;
          await page.getByLabel('New label').fill(renamed);
          await page.getByRole('button', { name: 'Rename', exact: true }).click();
          await page.getByText(`Renamed to ${renamed}.`).waitFor();
          await page.getByRole('link', { name: renamed }).waitFor();
          const s3Id = made.find((l) => l.provider === 's3')?.id;
          assert.ok(s3Id);

          // A wrong secret: the listing fails in words, with the detail one click away.
          await page.getByLabel('Access key ID').fill(REJECTED_ACCESS_KEY_ID);
          await page.getByLabel('Secret access key').fill('wrong');
          await page.getByRole('button', { name: 'Replace secret' }).click();
          await page.getByText(`The secret of ${renamed} was replaced.`).waitFor();
          assert.equal(await page.getByLabel('Access key ID').inputValue(), '', 'the secret is cleared');
          await page.goto(`${base}/#browse/${s3Id}`);
          const alert = page.getByRole('alert');
          await alert.waitFor();
          const sentence = await alert.locator('p').first().innerText();
          assert.match(
            sentence,
            new RegExp(
              `^The location ${renamed} cannot be used now: the storage provider refused its credentials.`,
            ),
          );
          assert.doesNotMatch(sentence, /InvalidAccessKeyId/, "the provider's words wait in the detail");
          assert.doesNotMatch(sentence, /^HTTP|ECONNREFUSED/);
          const detail = alert.getByText(/^HTTP 409/);
          assert.equal(await detail.isVisible(), false, 'the detail waits for a click');
          await alert.getByText('Technical detail').click();
          await detail.waitFor();
          assert.match(await detail.innerText(), /InvalidAccessKeyId/);
          await axe(page, 'a listing refused for a wrong secret');
          await shot(page, 'error-detail', width);

          // The right one: the listing works again.
          await page.goto(`${base}/#locations`);
          await page.getByRole('button', { name: `Manage ${renamed}` }).click();
          await page.getByLabel('Access key ID').fill('AKID');
          await page.getByLabel('Secret access key').fill('very-secret');
          await page.getByRole('button', { name: 'Replace secret' }).click();
          await page.getByText(`The secret of ${renamed} was replaced.`).waitFor();
          await page.goto(`${base}/#browse/${s3Id}`);
          await page.getByRole('link', { name: `${bucket}/` }).waitFor();

          // Delete, after typing the label.
          await page.goto(`${base}/#locations`);
          await page.getByRole('button', { name: `Manage ${renamed}` }).click();
          const del = page.getByRole('button', { name: `Delete ${renamed}` });
          assert.equal(await del.isDisabled(), true);
          await page.getByText('Its share links stop working').waitFor();
          await page.getByLabel(`Type ${renamed} to confirm`).fill('photos');
          assert.equal(await del.isDisabled(), true, 'only the whole label enables Delete');
          await page.getByLabel(`Type ${renamed} to confirm`).fill(renamed);
          await axe(page, 'the manage panel');
          await del.click();
          await page.getByText(`${renamed} was deleted.`).waitFor();
          // The list loads again without it.
          await page.getByRole('link', { name: renamed }).waitFor({ state: 'detached' });
          assert.deepEqual(
            (await locationsOf(call)).map((l) => l.label),
            [azLabel],
          );
          // No secret reached the page's text.
          assert.doesNotMatch(await page.content(), /very-secret|Eby8vdM02/);
        } finally {
          await page.close();
        }
      });

      test(`at ${width} px, errors in words: ferry out of reach, a store that refuses connections; the detail one click away`, async () => {
        const { call, page } = await signedIn(width);
        try {
          // The browser cannot reach ferry (the request fails in the network, as when it is down).
          await page.route('**/v1/locations', (route) => route.abort('connectionrefused'));
          await page.reload();
          const down = page.getByRole('alert').filter({ hasText: 'ferry could not be reached' });
          await down.waitFor();
          await down.getByText('Technical detail').click();
          await down.getByText(/^no answer from http:\/\/127\.0\.0\.1/).waitFor();
          await axe(page, 'the Locations page when ferry is out of reach');
          await page.unroute('**/v1/locations');

          // A location whose endpoint refuses connections: the provider, not ferry, is out of reach.
          const closed = await closedPort();
          const loc = await createLocation(call, {
            provider: 's3',
            secret: { access_key_id: 'AKID', secret_access_key: 'secret' },
            metadata: { endpoint: `http://127.0.0.1:${closed}` },
          });
          await page.goto(`${base}/#browse/${loc.id}`);
          const alert = page.getByRole('alert');
          await alert.waitFor();
          const sentence = await alert.locator('p').first().innerText();
          assert.match(sentence, /^ferry could not reach the storage provider/);
          assert.doesNotMatch(sentence, new RegExp(String(closed)), 'no address in the sentence');
          await alert.getByText('Technical detail').click();
          await alert.getByText(/^HTTP 502/).waitFor();
          await axe(page, 'a listing whose provider refuses connections');
          await shot(page, 'error-unreachable-store', width);
        } finally {
          await page.close();
        }
      });

      test(`at ${width} px, webhooks: created (secret once), an OAuth location's failed refresh shows its health and reaches the receiver, deliveries listed, a disabled endpoint re-enabled`, async () => {
        const { call, page } = await signedIn(width);
        try {
          await page.getByRole('link', { name: 'Webhooks' }).click();
          await page.getByText('No webhooks yet.').waitFor();
          await axe(page, 'the empty Webhooks page');

          // An address the egress guard refuses: an error in words.
          await page.getByLabel('Endpoint URL').fill('http://10.1.2.3/hook');
          await page.getByLabel('location.status_changed').check();
          await page.getByRole('button', { name: 'Create webhook' }).click();
          await page.getByRole('alert').filter({ hasText: 'ferry did not accept that' }).waitFor();
          await axe(page, 'the Webhooks page with an error');

          await page.getByLabel('Endpoint URL').fill(receiver.url);
          await page.getByRole('button', { name: 'Create webhook' }).click();
          const secret = await page.getByLabel('Signing secret').inputValue();
          assert.match(secret, /^whsec_/);
          await page.getByRole('button', { name: 'Copy secret' }).waitFor();
          await axe(page, 'the new webhook with its secret');
          await page.getByRole('button', { name: 'Done' }).click();
          await page.reload();
          await page
            .getByRole('row', { name: new RegExp(receiver.url) })
            .getByText('enabled')
            .waitFor();
          assert.equal(await page.getByLabel('Signing secret').count(), 0);
          assert.ok(!(await page.content()).includes(secret), 'the secret is shown once');

          // A dropbox location with a refresh token the provider does not know.
          await page.getByRole('link', { name: 'Locations' }).click();
          await page.getByRole('button', { name: 'New location' }).click();
          await page.getByLabel('Provider').selectOption('dropbox');
          const label = `dbx-${width}`;
          await page.getByLabel('Label', { exact: true }).fill(label);
          await page.getByLabel('Access token', { exact: true }).fill('sl.not-a-real-token');
          await page.getByLabel('Refresh token').fill('never-issued');
          await page.getByLabel('Access token expires').fill('2030-01-31T12:00:00Z');
          await page.getByRole('button', { name: 'Create location' }).click();
          await page.getByText(`Location ${label} created.`).waitFor();
          await page.getByRole('button', { name: `Manage ${label}` }).click();
          const panel = page.locator('section.panel').filter({ hasText: 'Health' });
          await panel.getByText('kept across refreshes').waitFor();
          const seen = receiver.received.length;
          await panel.getByRole('button', { name: 'Refresh now' }).click();
          await panel.getByText('failed', { exact: true }).waitFor();
          await panel.getByText('The grant is gone: connect the account again').waitFor();
          await panel.getByText('Why', { exact: true }).waitFor();
          assert.match(await panel.locator('dl').innerText(), /invalid_grant/);
          assert.match(await panel.locator('dl').innerText(), /Failed refreshes in a row\s+1/);
          await axe(page, 'a failed location');
          await shot(page, 'location-health', width);

          // The status change reaches the receiver, signed with the secret shown once.
          await waitUntil(async () => (receiver.received.length > seen ? true : undefined), {
            what: 'the webhook delivery',
          });
          const event = receiver.verify(receiver.received.at(-1) as never, secret);
          assert.equal(event.type, 'location.status_changed');
          await page.getByRole('link', { name: 'Webhooks' }).click();
          await page.getByRole('button', { name: `Deliveries to ${receiver.url}` }).click();
          const delivery = page.getByRole('row', { name: /location\.status_changed/ });
          await delivery.getByRole('cell', { name: '204', exact: true }).waitFor();
          await axe(page, 'the deliveries of an endpoint');
          await shot(page, 'webhooks', width);

          // Disabled (here through the API), re-enabled from the page.
          const hooks = await call({ method: 'GET', url: '/v1/webhooks' });
          const id: string = hooks.json().webhooks[0].id;
          const off = await call({
            method: 'PATCH',
            url: `/v1/webhooks/${id}`,
            payload: { status: 'disabled' },
          });
          assert.equal(off.statusCode, 200, off.body);
          await page.reload();
          const row = page.getByRole('row', { name: new RegExp(receiver.url) });
          await row.getByText('disabled through the API').waitFor();
          await axe(page, 'a disabled endpoint');
          await row.getByRole('button', { name: `Re-enable ${receiver.url}` }).click();
          await page.getByText(`${receiver.url} is enabled again.`).waitFor();
          await row.getByText('enabled', { exact: true }).waitFor();
          assert.equal((await call({ method: 'GET', url: `/v1/webhooks/${id}` })).json().status, 'enabled');

          // Deleted, after the confirmation (accepted by the dialog handler).
          await row.getByRole('button', { name: `Delete ${receiver.url}` }).click();
          await page.getByText('No webhooks yet.').waitFor();
          assert.equal((await call({ method: 'GET', url: `/v1/webhooks/${id}` })).statusCode, 404);
        } finally {
          await page.close();
        }
      });
    }
  });
}
