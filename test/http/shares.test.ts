// Share links through HTTP on both databases, with the files on a real s3rver: making, listing and
// revoking shares, and the link itself: bytes and headers, HEAD, ranges, a non-ASCII name, passwords
// (form, cookie, limits), download limits (landing page, counting), expiry, revocation, a source that
// cannot be reached, and secrets kept out of logs.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import type { LightMyRequestResponse } from 'fastify';
import { ManualClock, startTestApp, type TestApp } from '../support/app.js';
import { deferred } from '../support/deferred.js';
import { startFaultProxy } from '../support/fault-proxy.js';
import { eachDatabase } from '../support/fixtures.js';
import { type S3rverHandle, startS3rver } from '../support/s3rver.js';
import { type Call, createLocation, newWorkspace, s3Client, seedBucket } from '../support/transfers.js';

const PUBLIC_URL = 'https://files.example.test';
const REPORT = randomBytes(300_000);
const NON_ASCII = 'Grüße – été.txt';
/** Names a Content-Disposition must carry whole (docs/api.md, "Share links"): beyond ISO-8859-1, quotes, `;`. */
const JAPANESE = '日本語の図面.txt';
const QUOTED = 'the "final" cut.txt';
const SEMICOLON = 'notes;v=2.txt';

/**
 * The attributes of a share link's Set-Cookie, sorted (their order carries no meaning: RFC 6265 5.2),
 * after checking that it sets ferry_share to a token.
 */
function linkCookie(setCookie: string): string[] {
  const [pair = '', ...attributes] = setCookie.split('; ');
  assert.match(pair, /^ferry_share=[A-Za-z0-9_-]+$/);
  return attributes.sort();
}

await eachDatabase('share links', (database) => {
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
      env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32', FERRY_PUBLIC_URL: PUBLIC_URL },
    });
    call = await newWorkspace(t);
    const location = await createLocation(call, {
      provider: 's3',
      secret: { access_key_id: 'AKID', secret_access_key: 'secret' },
      metadata: { endpoint: s3.endpoint },
    });
    label = location.label;
    bucket = await seedBucket(client, {
      'docs/report.bin': REPORT,
      [`docs/${NON_ASCII}`]: 'bonjour',
      [`docs/${JAPANESE}`]: 'konnichiwa',
      [`docs/${QUOTED}`]: 'quoted',
      [`docs/${SEMICOLON}`]: 'semicolon',
      'docs/a1.txt': 'one',
      'docs/a2.txt': 'two',
    });
  });
  after(async () => {
    await t.close();
    client.destroy();
    await s3.close();
  });

  async function share(payload: Record<string, unknown>): Promise<{ id: string; url: string; path: string }> {
    const res = await call({ method: 'POST', url: '/share', payload });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    return { ...body, path: new URL(body.url).pathname };
  }
  const file = (name: string) => `${label}/${bucket}/docs/${name}`;
  const get = (path: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'GET', url: path, headers });
  const listed = async (id: string) =>
    ((await call({ method: 'GET', url: '/v1/shares' })).json().shares as Array<Record<string, unknown>>).find(
      (s) => s.id === id,
    );

  function assertPageHeaders(res: LightMyRequestResponse): void {
    assert.match(String(res.headers['content-security-policy']), /default-src 'none'/);
    assert.doesNotMatch(String(res.headers['content-security-policy']), /unsafe-inline/);
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.equal(res.headers['referrer-policy'], 'no-referrer');
    assert.equal(res.headers['cache-control'], 'no-store');
  }

  test('POST /share answers 201 with a URL on FERRY_PUBLIC_URL whose token has 256 bits, kept only as a hash; the list shows the share without it', async () => {
    const res = await call({ method: 'POST', url: '/share', payload: { file: file('report.bin') } });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['id', 'url']);
    const match = /^https:\/\/files\.example\.test\/s\/([A-Za-z0-9_-]{43})$/.exec(body.url);
    assert.ok(match?.[1], body.url);
    const rows = await t.services.db.kysely.selectFrom('shares').selectAll().execute();
    assert.equal(JSON.stringify(rows).includes(match[1]), false, 'the token is not stored');
    const item = await listed(body.id);
    assert.deepEqual(item, {
      id: body.id,
      source: `${label}/${bucket}/docs/report.bin`,
      state: 'active',
      created_at: new Date(clock.now()).toISOString(),
      has_password: false,
      downloads: 0,
    });
  });

  test('GET streams the file with its type, length, attachment name, ETag, Last-Modified, no-store; HEAD answers the headers without counting', async () => {
    const { id, path } = await share({ file: file('report.bin') });
    const head = await t.app.inject({ method: 'HEAD', url: path });
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers['content-length'], String(REPORT.length));
    assert.equal(head.body, '');
    assert.equal((await listed(id))?.downloads, 0, 'HEAD does not count');

    const res = await get(path);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.rawPayload, REPORT);
    assert.equal(res.headers['content-length'], String(REPORT.length));
    assert.equal(res.headers['content-type'], 'application/octet-stream');
    assert.equal(res.headers['content-disposition'], 'attachment; filename="report.bin"');
    assert.match(String(res.headers.etag), /^"[0-9a-f]{32}"$/);
    assert.ok(res.headers['last-modified']);
    assert.equal(res.headers['accept-ranges'], 'bytes');
    assertPageHeaders(res);
    const item = await listed(id);
    assert.equal(item?.downloads, 1);
    assert.equal(item?.last_download_at, new Date(clock.now()).toISOString());
  });

  test('a name beyond ASCII, with quotes or with `;` travels whole as an RFC 6266 filename*, beside an ASCII filename', async () => {
    // curl -J reads only `filename`, browsers and wget `filename*`: the first is ASCII (accents dropped,
    // a quote as ', what has no ASCII form as "download"), the second the name itself.
    for (const [name, body, ascii, star] of [
      [NON_ASCII, 'bonjour', 'Grusse - ete.txt', true],
      [JAPANESE, 'konnichiwa', 'download.txt', true],
      [QUOTED, 'quoted', "the 'final' cut.txt", true],
      [SEMICOLON, 'semicolon', SEMICOLON, false],
    ] as const) {
      const { path } = await share({ file: file(name) });
      const res = await get(path);
      assert.equal(res.statusCode, 200, name);
      assert.equal(res.body, body);
      assert.equal(
        res.headers['content-disposition'],
        `attachment; filename="${ascii}"${star ? `; filename*=UTF-8''${encodeURIComponent(name).replace(/'/g, '%27')}` : ''}`,
        name,
      );
    }
  });

  test('ranges: first, middle and suffix answer 206 with Content-Range; unsatisfiable 416; only a range from byte 0 counts; If-Range honours the ETag', async () => {
    const { id, path } = await share({ file: file('report.bin') });
    const size = REPORT.length;
    const first = await get(path, { range: 'bytes=0-99' });
    assert.equal(first.statusCode, 206);
    assert.equal(first.headers['content-range'], `bytes 0-99/${size}`);
    assert.deepEqual(first.rawPayload, REPORT.subarray(0, 100));
    const middle = await get(path, { range: 'bytes=1000-1999' });
    assert.equal(middle.statusCode, 206);
    assert.equal(middle.headers['content-length'], '1000');
    assert.deepEqual(middle.rawPayload, REPORT.subarray(1000, 2000));
    const suffix = await get(path, { range: 'bytes=-100' });
    assert.equal(suffix.statusCode, 206);
    assert.equal(suffix.headers['content-range'], `bytes ${size - 100}-${size - 1}/${size}`);
    assert.deepEqual(suffix.rawPayload, REPORT.subarray(size - 100));
    const beyond = await get(path, { range: `bytes=${size}-` });
    assert.equal(beyond.statusCode, 416);
    assert.equal(beyond.headers['content-range'], `bytes */${size}`);
    assert.equal((await listed(id))?.downloads, 1, 'only the range from byte 0 counted');

    const etag = String(first.headers.etag);
    const same = await get(path, { range: 'bytes=10-19', 'if-range': etag });
    assert.equal(same.statusCode, 206);
    const stale = await get(path, { range: 'bytes=10-19', 'if-range': '"0123456789abcdef0123456789abcdef"' });
    assert.equal(stale.statusCode, 200, 'another version: the whole file');
    assert.deepEqual(stale.rawPayload, REPORT);
  });

  test('If-Range compares entity tags strongly: with a weak ETag at the source the range is ignored and the whole file sent', async () => {
    const proxy = await startFaultProxy(s3.endpoint);
    try {
      const location = await createLocation(call, {
        provider: 's3',
        secret: { access_key_id: 'AKID', secret_access_key: 'secret' },
        metadata: { endpoint: proxy.url },
      });
      const { path } = await share({ file: `${location.label}/${bucket}/docs/report.bin` });
      const weak = 'W/"report-v1"';
      // Each GET of the link asks the source for the file's facts (its ETag among them), then reads.
      proxy.headersNext(1, { etag: weak });
      const same = await get(path, { range: 'bytes=10-19', 'if-range': weak });
      assert.equal(same.headers.etag, weak, 'the weak ETag is passed on as it is');
      assert.equal(same.statusCode, 200, 'a weak validator never matches');
      assert.deepEqual(same.rawPayload, REPORT);
      proxy.headersNext(1, { etag: weak });
      const strong = await get(path, { range: 'bytes=10-19', 'if-range': '"report-v1"' });
      assert.equal(strong.statusCode, 200, 'nor does a strong one against a weak ETag');
      assert.deepEqual(strong.rawPayload, REPORT);
      proxy.headersNext(1, { etag: '"report-v1"' });
      const weakGiven = await get(path, { range: 'bytes=10-19', 'if-range': weak });
      assert.equal(weakGiven.statusCode, 200, 'nor a weak one against a strong ETag');
      proxy.headersNext(1, { etag: '"report-v1"' });
      const match = await get(path, { range: 'bytes=10-19', 'if-range': '"report-v1"' });
      assert.equal(match.statusCode, 206, 'two strong tags that are equal match');
      assert.deepEqual(match.rawPayload, REPORT.subarray(10, 20));
      const lastModified = String(match.headers['last-modified']);
      const byDate = await get(path, { range: 'bytes=10-19', 'if-range': lastModified });
      assert.equal(byDate.statusCode, 206, 'Last-Modified, exactly');
      const otherDate = await get(path, {
        range: 'bytes=10-19',
        'if-range': new Date(Date.parse(lastModified) - 1000).toUTCString(),
      });
      assert.equal(otherDate.statusCode, 200);
    } finally {
      await proxy.close();
    }
  });

  test('a pattern must match exactly one file: several is 400 saying how many, none is 404', async () => {
    const several = await call({ method: 'POST', url: '/share', payload: { file: file('a*.txt') } });
    assert.equal(several.statusCode, 400);
    assert.match(several.json().message, /matches 2 files/);
    const none = await call({ method: 'POST', url: '/share', payload: { file: file('zz*.txt') } });
    assert.equal(none.statusCode, 404);
    const one = await share({ file: file('a1*.txt') });
    assert.equal((await get(one.path)).body, 'one');
    const bad = await call({
      method: 'POST',
      url: '/share',
      payload: { file: file('a1.txt'), passwrd: 'x' },
    });
    assert.equal(bad.statusCode, 400, 'an unknown field');
    const past = await call({
      method: 'POST',
      url: '/share',
      payload: { file: file('a1.txt'), expires_at: new Date(clock.now() - 1000).toISOString() },
    });
    assert.equal(past.statusCode, 400);
  });

  test('a password link answers a form; a wrong password the form again with 401; the right one the file and an HttpOnly SameSite=Strict cookie for the link, with which a range resumes', async () => {
    const password = `pw-${randomBytes(6).toString('hex')}`;
    const { id, path } = await share({ file: file('report.bin'), password });
    const row = await t.services.db.kysely
      .selectFrom('shares')
      .select('password_hash')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.match(String(row.password_hash), /^\$argon2id\$/);

    const form = await get(path);
    assert.equal(form.statusCode, 200);
    assert.match(String(form.headers['content-type']), /^text\/html/);
    assert.match(form.body, /<form method="post"/);
    assert.match(form.body, /report\.bin/);
    assert.match(form.body, /293 KiB/);
    assertPageHeaders(form);

    const post = (value: string, address = '127.0.0.1') =>
      t.app.inject({
        method: 'POST',
        url: path,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ password: value }).toString(),
        remoteAddress: address,
      });
    const wrong = await post('not it');
    assert.equal(wrong.statusCode, 401);
    assert.match(wrong.body, /not right/);
    const right = await post(password);
    assert.equal(right.statusCode, 200);
    assert.deepEqual(right.rawPayload, REPORT);
    const cookie = String(right.headers['set-cookie']);
    assert.deepEqual(linkCookie(cookie), [
      'HttpOnly',
      'Max-Age=3600',
      `Path=${path}`,
      'SameSite=Strict',
      'Secure',
    ]);
    const resumed = await get(path, { range: 'bytes=1000-', cookie: cookie.split(';')[0] as string });
    assert.equal(resumed.statusCode, 206);
    assert.deepEqual(resumed.rawPayload, REPORT.subarray(1000));
    assert.equal((await get(path, { cookie: 'ferry_share=forged' })).statusCode, 200);
    assert.match((await get(path, { cookie: 'ferry_share=forged' })).body, /<form/);
    clock.advance(3_600_001);
    assert.match(
      (await get(path, { cookie: cookie.split(';')[0] as string })).body,
      /<form/,
      'the cookie lasts an hour',
    );
    assert.equal((await listed(id))?.downloads, 1);
    assert.equal(t.logs.text.includes(password), false, 'the password is never logged');
  });

  test('wrong passwords are limited per client address (429 with Retry-After, even for the right password)', async () => {
    const password = 'correct horse';
    const { path } = await share({ file: file('a1.txt'), password });
    const post = (value: string, address: string) =>
      t.app.inject({
        method: 'POST',
        url: path,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `password=${encodeURIComponent(value)}`,
        remoteAddress: address,
      });
    for (let i = 0; i < 5; i++) assert.equal((await post('guess', '10.0.0.1')).statusCode, 401);
    const limited = await post(password, '10.0.0.1');
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.headers['retry-after'], '60');
    assert.equal((await post(password, '10.0.0.2')).statusCode, 200, 'another address may still try');
    for (let a = 3; a <= 4; a++)
      for (let i = 0; i < 5; i++) assert.equal((await post('guess', `10.0.0.${a}`)).statusCode, 401);
    // Twenty wrong guesses on the link: an address that guessed wrong is refused, even the right password.
    for (let i = 0; i < 5; i++) assert.equal((await post('guess', '10.0.0.6')).statusCode, 401);
    assert.equal((await post(password, '10.0.0.6')).statusCode, 429, 'a guesser at its own limit');
    assert.equal(
      (await post(password, '10.0.0.9')).statusCode,
      200,
      'an address that has not guessed is not locked out by the others',
    );
    clock.advance(60_001);
    assert.equal((await post(password, '10.0.0.1')).statusCode, 200, 'a minute later');
    // A right password is no guess: four wrong, the right one, and a fifth wrong one is still a 401.
    for (let i = 0; i < 4; i++) assert.equal((await post('guess', '10.0.0.1')).statusCode, 401);
    assert.equal((await post(password, '10.0.0.1')).statusCode, 200);
    assert.equal((await post('guess', '10.0.0.1')).statusCode, 401, 'the fifth wrong one');
    assert.equal((await post(password, '10.0.0.1')).statusCode, 429, 'and then none');
    const metrics = await t.request({ method: 'GET', url: '/metrics' });
    assert.match(metrics.body, /ferry_share_passwords_refused_total [1-9]/);
    assert.match(metrics.body, /ferry_share_downloads_total [1-9]/);
  });

  test('wrong passwords fired at once, through two processes on one database, are refused with 401 exactly up to the limit and 429 beyond it', async () => {
    const second = await startTestApp(database, {
      clock,
      env: { FERRY_EGRESS_ALLOW: '127.0.0.1/32', FERRY_PUBLIC_URL: PUBLIC_URL },
      shareWith: t,
    });
    try {
      const processes = [t, second];
      const post = (i: number, path: string, address: string) =>
        (processes[i % 2] as TestApp).app.inject({
          method: 'POST',
          url: path,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: `password=guess-${i}`,
          remoteAddress: address,
        });
      const tally = (answers: LightMyRequestResponse[]) => {
        const counts: Record<number, number> = {};
        for (const a of answers) counts[a.statusCode] = (counts[a.statusCode] ?? 0) + 1;
        return counts;
      };
      const one = await share({ file: file('a1.txt'), password: 'correct horse' });
      const fromOne = await Promise.all(Array.from({ length: 12 }, (_, i) => post(i, one.path, '10.1.0.1')));
      assert.deepEqual(tally(fromOne), { 401: 5, 429: 7 }, 'per client address');

      const many = await share({ file: file('a1.txt'), password: 'correct horse' });
      // Ten addresses guess wrong once each; then three more guesses each, at once: under the
      // per-address limit, over the per-link one for addresses that guessed wrong.
      for (let i = 0; i < 10; i++) assert.equal((await post(i, many.path, `10.2.0.${i}`)).statusCode, 401);
      const fromMany = await Promise.all(
        Array.from({ length: 30 }, (_, i) => post(i, many.path, `10.2.0.${i % 10}`)),
      );
      assert.deepEqual(tally(fromMany), { 401: 10, 429: 20 }, 'per link');
    } finally {
      await second.close();
    }
  });

  test('a link with max_downloads answers a landing page (no count); its POST downloads and counts; used up it answers 410', async () => {
    const { id, path } = await share({ file: file('a2.txt'), max_downloads: 2 });
    const landing = await get(path);
    assert.equal(landing.statusCode, 200);
    assert.match(landing.body, /<form method="post"/);
    assert.match(landing.body, /2 more times/);
    assert.equal((await listed(id))?.downloads, 0);
    assert.equal((await listed(id))?.state, 'active');
    const first = await t.app.inject({ method: 'POST', url: path });
    assert.equal(first.statusCode, 200);
    assert.equal(first.body, 'two');
    const ranged = await get(path, { range: 'bytes=0-' });
    assert.equal(ranged.statusCode, 206, 'a resumed download is a GET with a range');
    const gone = await get(path);
    assert.equal(gone.statusCode, 410);
    assert.match(gone.body, /used/);
    assert.equal((await t.app.inject({ method: 'POST', url: path })).statusCode, 410);
    assert.equal((await listed(id))?.downloads, 2);
    assert.equal((await listed(id))?.max_downloads, 2);
    assert.equal((await listed(id))?.state, 'used_up', 'a used-up link is not listed active');
  });

  test('with max_downloads, ranges that continue a download (same browser by its cookie, or same address) count nothing, even once the link is used up; a range from anyone else is a download of its own', async () => {
    const { id, path } = await share({ file: file('report.bin'), max_downloads: 2 });
    const from = (address: string, headers: Record<string, string> = {}) =>
      t.app.inject({ method: 'GET', url: path, headers, remoteAddress: address });
    const downloads = async () => (await listed(id))?.downloads;

    const first = await t.app.inject({ method: 'POST', url: path, remoteAddress: '10.3.0.1' });
    assert.equal(first.statusCode, 200);
    assert.equal(await downloads(), 1);
    const setCookie = String(first.headers['set-cookie']);
    assert.deepEqual(linkCookie(setCookie), [
      'HttpOnly',
      'Max-Age=3600',
      `Path=${path}`,
      'SameSite=Strict',
      'Secure',
    ]);
    const cookie = setCookie.split(';')[0] as string;

    const resumed = await from('10.3.0.1', { range: 'bytes=1000-' });
    assert.equal(resumed.statusCode, 206, 'the same address resumes');
    assert.deepEqual(resumed.rawPayload, REPORT.subarray(1000));
    const moved = await from('10.3.0.9', { range: 'bytes=2000-2999', cookie });
    assert.equal(moved.statusCode, 206, 'the same browser at another address resumes');
    assert.equal(await downloads(), 1, 'neither counted');
    assert.equal(moved.headers['set-cookie'], undefined, 'it has its cookie already');

    const stranger = await from('10.3.0.2', { range: 'bytes=1000-' });
    assert.equal(stranger.statusCode, 206);
    assert.equal(await downloads(), 2, "a stranger's range is a download of its own");
    assert.match(String(stranger.headers['set-cookie']), /^ferry_share=/);
    const another = await from('10.3.0.3', { range: 'bytes=5000-' });
    assert.equal(another.statusCode, 410, 'none left for anyone else');

    const late = await from('10.3.0.1', { range: 'bytes=5000-' });
    assert.equal(late.statusCode, 206, 'a download it served resumes after the limit was reached');
    assert.deepEqual(late.rawPayload, REPORT.subarray(5000));
    assert.equal((await from('10.3.0.9', { range: 'bytes=5000-', cookie })).statusCode, 206);
    assert.equal((await from('10.3.0.1', { range: 'bytes=0-' })).statusCode, 410, 'from byte 0 is a new one');
    assert.equal(
      (await t.app.inject({ method: 'POST', url: path, remoteAddress: '10.3.0.1' })).statusCode,
      410,
    );
    assert.equal(await downloads(), 2);

    clock.advance(3_600_001);
    assert.equal((await from('10.3.0.1', { range: 'bytes=5000-' })).statusCode, 410, 'for an hour');
    assert.equal((await from('10.3.0.9', { range: 'bytes=5000-', cookie })).statusCode, 410);
  });

  test('with max_downloads 1, a download manager that fetches the file in several ranges at once uses up one download', async () => {
    const { id, path } = await share({ file: file('report.bin'), max_downloads: 1 });
    const part = (range: string) =>
      t.app.inject({ method: 'GET', url: path, headers: { range }, remoteAddress: '10.4.0.1' });
    const head = await part('bytes=0-99999');
    assert.equal(head.statusCode, 206);
    const rest = await Promise.all([part('bytes=100000-199999'), part('bytes=200000-')]);
    assert.deepEqual(
      rest.map((r) => r.statusCode),
      [206, 206],
    );
    assert.deepEqual(Buffer.concat([head.rawPayload, ...rest.map((r) => r.rawPayload)]), REPORT);
    assert.equal((await listed(id))?.downloads, 1);
    const elsewhere = await t.app.inject({
      method: 'GET',
      url: path,
      headers: { range: 'bytes=100000-' },
      remoteAddress: '10.4.0.2',
    });
    assert.equal(elsewhere.statusCode, 410, 'but nobody else gets a part');
  });

  test("an expired link answers 410, a revoked or unknown one 404, as HTML pages; revoking is for the workspace's own shares", async () => {
    const expiring = await share({
      file: file('a1.txt'),
      expires_at: new Date(clock.now() + 60_000).toISOString(),
    });
    assert.equal((await get(expiring.path)).statusCode, 200);
    clock.advance(60_000);
    const expired = await get(expiring.path);
    assert.equal(expired.statusCode, 410);
    assert.match(expired.body, /expired/);
    assertPageHeaders(expired);
    assert.equal((await listed(expiring.id))?.state, 'expired', 'an expired link is not listed active');

    const revoked = await share({ file: file('a1.txt') });
    const other = await newWorkspace(t);
    assert.equal((await other({ method: 'DELETE', url: `/v1/shares/${revoked.id}` })).statusCode, 404);
    assert.equal((await call({ method: 'DELETE', url: `/v1/shares/${revoked.id}` })).statusCode, 204);
    assert.equal((await call({ method: 'DELETE', url: `/v1/shares/${revoked.id}` })).statusCode, 204);
    assert.equal((await call({ method: 'DELETE', url: '/v1/shares/not-a-uuid' })).statusCode, 404);
    const gone = await get(revoked.path);
    assert.equal(gone.statusCode, 404);
    assert.match(String(gone.headers['content-type']), /^text\/html/);
    assert.ok((await listed(revoked.id))?.revoked_at);
    assert.equal((await listed(revoked.id))?.state, 'revoked');
    assert.equal((await get('/s/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).statusCode, 404);
    assert.equal(t.logs.text.includes(revoked.path.slice(3)), false, 'no token in the logs');
  });

  test("GET /v1/shares names each share's state: active, expired once past expires_at, used_up at max_downloads, revoked (which wins)", async () => {
    const expiring = await share({
      file: file('a1.txt'),
      expires_at: new Date(clock.now() + 1_000).toISOString(),
    });
    const limited = await share({ file: file('a1.txt'), max_downloads: 1 });
    const revoked = await share({ file: file('a1.txt'), max_downloads: 1 });
    assert.equal((await listed(expiring.id))?.state, 'active');
    assert.equal((await listed(limited.id))?.state, 'active');
    assert.equal((await t.app.inject({ method: 'POST', url: limited.path })).statusCode, 200);
    assert.equal((await t.app.inject({ method: 'POST', url: revoked.path })).statusCode, 200);
    assert.equal((await listed(limited.id))?.state, 'used_up');
    assert.equal((await call({ method: 'DELETE', url: `/v1/shares/${revoked.id}` })).statusCode, 204);
    assert.equal((await listed(revoked.id))?.state, 'revoked', 'revoked wins over used up');
    clock.advance(1_000);
    assert.equal((await listed(expiring.id))?.state, 'expired');
  });

  test('a source that fails after the file started: the connection is cut, never a short file that looks complete', async () => {
    const proxy = await startFaultProxy(s3.endpoint);
    try {
      const location = await createLocation(call, {
        provider: 's3',
        secret: { access_key_id: 'AKID', secret_access_key: 'secret' },
        metadata: { endpoint: proxy.url },
      });
      const { path } = await share({ file: `${location.label}/${bucket}/docs/report.bin` });
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = t.app.server.address() as AddressInfo;
      proxy.passNext(1); // the stat
      const headersArrived = deferred();
      // The read: headers and part of the body, then the connection is cut once this test has
      // received ferry's headers.
      proxy.dropNext(1, headersArrived.promise);
      const res = await fetch(`http://127.0.0.1:${port}${path}`);
      headersArrived.resolve();
      const outcome = {
        status: res.status,
        length: res.headers.get('content-length') ?? undefined,
        ...(await res.arrayBuffer().then(
          (b) => ({ received: b.byteLength, complete: true }),
          () => ({ received: 0, complete: false }),
        )),
      };
      assert.equal(outcome.status, 200);
      assert.equal(outcome.length, String(REPORT.length));
      assert.equal(outcome.complete, false, 'the response did not end normally');
    } finally {
      await proxy.close();
    }
  });

  test('a source that fails as it opens, before the first byte, answers 503 and uses up no download', async () => {
    const proxy = await startFaultProxy(s3.endpoint);
    try {
      const location = await createLocation(call, {
        provider: 's3',
        secret: { access_key_id: 'AKID', secret_access_key: 'secret' },
        metadata: { endpoint: proxy.url },
      });
      const { id, path } = await share({
        file: `${location.label}/${bucket}/docs/report.bin`,
        max_downloads: 1,
      });
      proxy.passNext(1); // the file's facts
      proxy.cutBodyNext(1); // the read: the source's headers, then nothing
      const failed = await t.app.inject({ method: 'POST', url: path });
      assert.equal(failed.statusCode, 503);
      assert.match(failed.body, /cannot be reached/);
      assert.equal(failed.headers['content-disposition'], undefined, 'a page, not the file');
      assert.equal((await listed(id))?.downloads, 0, 'nothing was served, nothing counted');
      const served = await t.app.inject({ method: 'POST', url: path });
      assert.equal(served.statusCode, 200, 'the one download is still there');
      assert.deepEqual(served.rawPayload, REPORT);
      assert.equal((await listed(id))?.downloads, 1);
    } finally {
      await proxy.close();
    }
  });

  test('a source that cannot be reached answers the fallback page with 503', async () => {
    const offline = await startS3rver();
    const closed = { done: false };
    try {
      const location = await createLocation(call, {
        provider: 's3',
        secret: { access_key_id: 'AKID', secret_access_key: 'secret' },
        metadata: { endpoint: offline.endpoint },
      });
      const other = await seedBucket(s3Client(offline.endpoint), { 'f.txt': 'x' });
      const { path } = await share({ file: `${location.label}/${other}/f.txt` });
      await offline.close();
      closed.done = true;
      const res = await get(path);
      assert.equal(res.statusCode, 503);
      assert.match(res.body, /cannot be reached/);
      assertPageHeaders(res);
    } finally {
      if (!closed.done) await offline.close();
    }
  });
});
