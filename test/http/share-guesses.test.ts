// Share passwords guessed from many addresses (docs/api.md, "Share links"), on both databases with the
// file on s3rver: addresses that guessed wrong are held to the per-link ceiling, an address that has
// not guessed may still give the right password, and the link sees at most
// FERRY_SHARE_GUESSES_PER_LINK_MAX attempts a minute whatever the number of addresses.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase } from '../support/fixtures.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { type Call, createLocation, newWorkspace, s3Client, seedBucket } from '../support/transfers.js';

await eachDatabase('share password guesses', (database) => {
  const clock = new ManualClock(Date.now());
  let t: TestApp;
  let s3: S3rverHandle;
  let client: S3Client;
  let call: Call;
  let label: string;
  let bucket: string;

  before(async () => {
    s3 = await startS3rver();
    client = s3Client(s3.endpoint);
    t = await startTestApp(database, {
      clock,
      // The ceiling for addresses that have not guessed, low enough to reach in a test.
      env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32', FERRY_SHARE_GUESSES_PER_LINK_MAX: '30' },
    });
    call = await newWorkspace(t);
    label = (
      await createLocation(call, {
        provider: 's3',
        secret: { access_key_id: 'AKID', secret_access_key: 'secret' },
        metadata: { endpoint: s3.endpoint },
      })
    ).label;
    bucket = await seedBucket(client, { 'a1.txt': 'one' });
  });
  after(async () => {
    await t.close();
    client.destroy();
    await s3.close();
  });

  async function share(payload: Record<string, unknown>): Promise<{ path: string }> {
    const res = await call({ method: 'POST', url: '/share', payload });
    assert.equal(res.statusCode, 201, res.body);
    return { path: new URL(res.json().url).pathname };
  }

  test('twenty wrong passwords from twenty addresses lock out those addresses, not the right password from a fresh one; the link sees at most FERRY_SHARE_GUESSES_PER_LINK_MAX attempts a minute', async () => {
    const password = 'correct horse';
    const { path } = await share({ file: `${label}/${bucket}/a1.txt`, password });
    const post = (value: string, address: string) =>
      t.app.inject({
        method: 'POST',
        url: path,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `password=${encodeURIComponent(value)}`,
        remoteAddress: address,
      });
    for (let a = 0; a < 20; a++) assert.equal((await post('guess', `10.5.0.${a}`)).statusCode, 401);
    const again = await post('guess', '10.5.0.0');
    assert.equal(again.statusCode, 429, 'a 21st wrong guess, from an address that guessed wrong');
    assert.equal(Number(again.headers['retry-after']) >= 1, true);
    assert.equal(
      (await post(password, '10.5.0.1')).statusCode,
      429,
      'such an address, even with the right one',
    );
    const fresh = await post(password, '10.5.1.1');
    assert.equal(fresh.statusCode, 200, 'the right password from an address that has not guessed');
    assert.equal(fresh.body, 'one');
    // Each fresh address has one try while the link has had fewer than 30 (here) in the minute.
    for (let a = 20; a < 30; a++) assert.equal((await post('guess', `10.5.0.${a}`)).statusCode, 401);
    const bounded = await post(password, '10.5.1.2');
    assert.equal(bounded.statusCode, 429, 'past 30 attempts on the link, every address waits');
    clock.advance(60_001);
    assert.equal((await post(password, '10.5.0.0')).statusCode, 200, 'a minute later');
  });
});
