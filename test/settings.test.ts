// Settings reach what they promise to drive (README "Settings"): each worker setting parsed from the
// environment is the option the running worker has, on both databases; no setting is read that
// nothing uses.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { loadConfig } from '../src/config.js';
import { startTestApp, type TestApp } from './support/app.js';
import { eachDatabase } from './support/fixtures.js';

await eachDatabase('settings', (database) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(database, {
      worker: true,
      env: {
        FERRY_WORKER_CONCURRENCY: '7',
        FERRY_LOCATION_CONCURRENCY: '5',
        FERRY_WORKSPACE_CONCURRENCY: '3',
        FERRY_WORKER_LEASE_SECONDS: '12',
      },
    });
  });
  after(() => t.close());

  test('FERRY_WORKER_, _LOCATION_ and _WORKSPACE_CONCURRENCY and FERRY_WORKER_LEASE_SECONDS drive the worker', () => {
    const options = t.worker?.options;
    assert.ok(options, 'a worker runs');
    assert.equal(options.concurrency, 7);
    assert.equal(options.perLocation, 5);
    assert.equal(options.perWorkspace, 3);
    assert.equal(options.leaseMs, 12_000);
  });

  test('_CONTENT_URL is read for dropbox and box only, the two that serve contents from a host of their own', () => {
    const config = loadConfig({
      FERRY_DROPBOX_CONTENT_URL: 'http://127.0.0.1:1/dropbox',
      FERRY_BOX_CONTENT_URL: 'http://127.0.0.1:1/box',
      FERRY_DRIVE_CONTENT_URL: 'http://127.0.0.1:1/drive',
      FERRY_ONEDRIVE_CONTENT_URL: 'http://127.0.0.1:1/onedrive',
    });
    assert.equal(config.oauthApps.dropbox.contentUrl, 'http://127.0.0.1:1/dropbox');
    assert.equal(config.oauthApps.box.contentUrl, 'http://127.0.0.1:1/box');
    assert.equal(config.oauthApps.drive.contentUrl, undefined);
    assert.equal(config.oauthApps.onedrive.contentUrl, undefined);
  });

  test('the default FERRY_MAIL_FROM is ferry@<host> for a DNS name and an address literal for an IP; FERRY_MAIL_FROM overrides', () => {
    const from = (env: Record<string, string>) => loadConfig(env).mail.from;
    assert.equal(from({ FERRY_PUBLIC_URL: 'https://files.example.com' }), 'ferry@files.example.com');
    assert.equal(from({ FERRY_PUBLIC_URL: 'http://127.0.0.1:8080' }), 'ferry@[127.0.0.1]');
    assert.equal(from({ FERRY_PUBLIC_URL: 'http://[::1]:8080' }), 'ferry@[IPv6:::1]');
    assert.equal(from({ FERRY_PUBLIC_URL: 'http://localhost:8080' }), 'ferry@localhost');
    assert.equal(
      from({ FERRY_PUBLIC_URL: 'http://127.0.0.1:8080', FERRY_MAIL_FROM: 'files@example.org' }),
      'files@example.org',
    );
  });
});
