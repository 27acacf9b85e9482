// Each fake's answers keep the recorded shapes of ./<provider>/fixtures: the same keys and JSON types,
// recursively, the same status, and the headers the recording has (Retry-After, WWW-Authenticate).
// A fake that drifts from its provider's reference, or a fixture changed without the fake, fails here.
// The requests are the ones the stores send (src/stores/<provider>/), written out by hand.
import assert from 'node:assert/strict';
import { createSign, generateKeyPairSync } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { FakeBox } from './box/server.js';
import { FakeDrive } from './drive/server.js';
import { FakeDropbox } from './dropbox/server.js';
import { type FixtureProvider, fixture, shapeMismatches } from './fixtures.js';
import { FakeGcs } from './gcs/server.js';
import { FakeOneDrive } from './onedrive/server.js';

/** Asserts that an answer has the status, headers and body shape of a recorded one. */
async function assertRecorded(res: Response, provider: FixtureProvider, name: string): Promise<void> {
  const recorded = fixture(provider, name);
  const text = await res.text();
  assert.equal(res.status, recorded.status, `${provider}/${name}: status (body ${text.slice(0, 300)})`);
  for (const header of Object.keys(recorded.headers)) {
    assert.ok(res.headers.get(header), `${provider}/${name}: the answer has no ${header} header`);
  }
  const body: unknown = text === '' ? null : JSON.parse(text);
  if (recorded.body === null) {
    assert.equal(text, '', `${provider}/${name}: the recorded answer has no body`);
    return;
  }
  assert.deepEqual(shapeMismatches(body, recorded), [], `${provider}/${name}: shape`);
}

const json = (token: string, body: unknown): RequestInit => ({
  method: 'POST',
  headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

const form = (fields: Record<string, string>): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
});

const bearer = (token: string): RequestInit => ({ headers: { authorization: `Bearer ${token}` } });

describe('the fake Dropbox answers in the recorded shapes', () => {
  let fake: FakeDropbox;
  let tokens: ReturnType<FakeDropbox['oauth']['issue']>;
  const rpc = (route: string, arg: unknown, token = tokens.access_token) =>
    fetch(`${fake.apiUrl}/2/${route}`, json(token, arg));

  before(async () => {
    fake = await new FakeDropbox({ pageSize: 1 }).start();
    tokens = fake.oauth.issue('dbid:shapes');
    await rpc('files/create_folder_v2', { path: '/dir' });
    await rpc('files/create_folder_v2', { path: '/dir/sub' });
    await fetch(`${fake.contentUrl}/2/files/upload`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens.access_token}`,
        'content-type': 'application/octet-stream',
        'dropbox-api-arg': JSON.stringify({ path: '/dir/a.txt', mode: 'add' }),
      },
      body: 'hello',
    });
  });
  after(() => fake?.close());

  test('list_folder and list_folder/continue pages: entries (file and folder), cursor, has_more', async () => {
    const first = await rpc('files/list_folder', { path: '/dir' });
    const page = (await first.clone().json()) as { cursor: string; has_more: boolean };
    assert.equal(page.has_more, true, 'a page of one in a folder of two');
    await assertRecorded(first, 'dropbox', 'list_folder');
    await assertRecorded(
      await rpc('files/list_folder/continue', { cursor: page.cursor }),
      'dropbox',
      'list_folder',
    );
  });

  test('get_metadata of a file', async () => {
    await assertRecorded(await rpc('files/get_metadata', { path: '/dir/a.txt' }), 'dropbox', 'get_metadata');
  });

  test('409 path/not_found, 409 path/conflict/folder', async () => {
    await assertRecorded(await rpc('files/get_metadata', { path: '/nope' }), 'dropbox', 'error_not_found');
    await assertRecorded(await rpc('files/create_folder_v2', { path: '/dir' }), 'dropbox', 'error_conflict');
  });

  test('401 invalid_access_token and expired_access_token', async () => {
    await assertRecorded(
      await rpc('files/get_metadata', { path: '/dir' }, 'sl.bogus'),
      'dropbox',
      'error_invalid_token',
    );
    const other = fake.oauth.issue('dbid:shapes');
    fake.oauth.expireAccessToken(other.access_token);
    const res = await rpc('files/get_metadata', { path: '/dir' }, other.access_token);
    await assertRecorded(res, 'dropbox', 'error_expired_token');
  });

  test('429 too_many_requests with Retry-After', async () => {
    fake.throttleNext(1, 9);
    const res = await rpc('files/get_metadata', { path: '/dir' });
    assert.equal(res.headers.get('retry-after'), '9');
    await assertRecorded(res, 'dropbox', 'rate_limit');
  });

  test('token endpoint: a refresh, and invalid_grant', async () => {
    const grant = { grant_type: 'refresh_token', client_id: 'app', client_secret: 'secret' };
    await assertRecorded(
      await fetch(fake.tokenUrl, form({ ...grant, refresh_token: tokens.refresh_token })),
      'dropbox',
      'token',
    );
    await assertRecorded(
      await fetch(fake.tokenUrl, form({ ...grant, refresh_token: 'revoked' })),
      'dropbox',
      'token_invalid_grant',
    );
  });
});

describe('the fake Drive answers in the recorded shapes', () => {
  let fake: FakeDrive;
  let tokens: ReturnType<FakeDrive['oauth']['issue']>;
  let fileId: string;
  const get = (path: string, token = tokens.access_token) => fetch(`${fake.url}${path}`, bearer(token));

  before(async () => {
    fake = await FakeDrive.start({ maxPageSize: 1 });
    tokens = fake.oauth.issue('drive-shapes');
    fileId = fake.put('dir/a.txt', 'hello');
    fake.mkdir('dir/sub');
  });
  after(() => fake?.close());

  test('files.list pages: files, nextPageToken (absent on the last page), incompleteSearch', async () => {
    const res = await get('/drive/v3/files?pageSize=1&fields=*');
    const page = (await res.clone().json()) as { nextPageToken?: string };
    assert.ok(page.nextPageToken, 'a page of one of several files');
    await assertRecorded(res, 'drive', 'files_list');
  });

  test('files.get of a file', async () => {
    await assertRecorded(await get(`/drive/v3/files/${fileId}?fields=*`), 'drive', 'file');
  });

  test('404 notFound, 401 authError', async () => {
    await assertRecorded(await get('/drive/v3/files/nope?fields=*'), 'drive', 'error_not_found');
    await assertRecorded(await get(`/drive/v3/files/${fileId}`, 'ya29.bogus'), 'drive', 'error_unauthorized');
  });

  test('403 userRateLimitExceeded, 429 rateLimitExceeded with Retry-After, 500 backendError', async () => {
    fake.throttleNext(1);
    await assertRecorded(await get(`/drive/v3/files/${fileId}`), 'drive', 'rate_limit_user');
    fake.throttleNext(1, { status: 429, retryAfter: 30 });
    await assertRecorded(await get(`/drive/v3/files/${fileId}`), 'drive', 'rate_limit_429');
    fake.failNext(1);
    await assertRecorded(await get(`/drive/v3/files/${fileId}`), 'drive', 'error_backend');
  });

  test('token endpoint: a refresh, invalid_grant, and the reauthentication invalid_grant', async () => {
    const grant = { grant_type: 'refresh_token', client_id: 'app', client_secret: 'secret' };
    await assertRecorded(
      await fetch(fake.tokenUrl, form({ ...grant, refresh_token: tokens.refresh_token })),
      'drive',
      'token',
    );
    await assertRecorded(
      await fetch(fake.tokenUrl, form({ ...grant, refresh_token: 'revoked' })),
      'drive',
      'token_invalid_grant',
    );
    fake.oauth.failNext('interaction');
    await assertRecorded(
      await fetch(fake.tokenUrl, form({ ...grant, refresh_token: tokens.refresh_token })),
      'drive',
      'token_invalid_rapt',
    );
  });
});

describe('the fake OneDrive answers in the recorded shapes', () => {
  let fake: FakeOneDrive;
  let tokens: ReturnType<FakeOneDrive['oauth']['issue']>;
  const get = (path: string, token = tokens.access_token) => fetch(`${fake.apiUrl}${path}`, bearer(token));

  before(async () => {
    fake = await FakeOneDrive.start({ maxPageSize: 1 });
    tokens = fake.oauth.issue('onedrive-shapes');
    fake.put('dir/a.txt', 'hello');
    fake.mkdir('dir/sub');
  });
  after(() => fake?.close());

  test('children pages: value (file and folder), @odata.nextLink', async () => {
    const res = await get('/me/drive/root:/dir:/children');
    const page = (await res.clone().json()) as Record<string, unknown>;
    assert.ok(page['@odata.nextLink'], 'a page of one of two children');
    await assertRecorded(res, 'onedrive', 'children');
    await assertRecorded(await get('/me/drive/root/children'), 'onedrive', 'children');
  });

  test('the driveItem of a file', async () => {
    await assertRecorded(await get('/me/drive/root:/dir/a.txt'), 'onedrive', 'item');
  });

  test('404 itemNotFound, 409 nameAlreadyExists, 401 InvalidAuthenticationToken', async () => {
    await assertRecorded(await get('/me/drive/root:/nope'), 'onedrive', 'error_not_found');
    const res = await fetch(
      `${fake.apiUrl}/me/drive/root:/dir:/children`,
      json(tokens.access_token, { name: 'sub', folder: {}, '@microsoft.graph.conflictBehavior': 'fail' }),
    );
    await assertRecorded(res, 'onedrive', 'error_conflict');
    await assertRecorded(await get('/me/drive/root', 'EwBbogus'), 'onedrive', 'error_unauthorized');
  });

  test('429 activityLimitReached and 503 serviceNotAvailable, with Retry-After', async () => {
    fake.throttleNext(1, { retryAfter: 120 });
    await assertRecorded(await get('/me/drive/root'), 'onedrive', 'throttled_429');
    fake.throttleNext(1, { status: 503, retryAfter: 60 });
    await assertRecorded(await get('/me/drive/root'), 'onedrive', 'unavailable_503');
  });

  test('token endpoint: a refresh, and invalid_grant (AADSTS70008x)', async () => {
    const grant = {
      grant_type: 'refresh_token',
      client_id: 'app',
      client_secret: 'secret',
      scope: 'Files.ReadWrite.All offline_access',
    };
    await assertRecorded(
      await fetch(fake.tokenUrl, form({ ...grant, refresh_token: tokens.refresh_token })),
      'onedrive',
      'token',
    );
    await assertRecorded(
      await fetch(fake.tokenUrl, form({ ...grant, refresh_token: 'revoked' })),
      'onedrive',
      'token_invalid_grant',
    );
  });
});

describe('the fake Box answers in the recorded shapes', () => {
  let fake: FakeBox;
  let tokens: ReturnType<FakeBox['oauth']['issue']>;
  let folderId: string;
  let fileId: string;
  const get = (path: string, token = tokens.access_token) =>
    fetch(`${fake.apiUrl}/2.0${path}`, bearer(token));

  before(async () => {
    fake = await new FakeBox({ pageSize: 1 }).start();
    tokens = fake.oauth.issue('box-shapes');
    const tree = fake.tree('box-shapes');
    folderId = tree.createFolder('0', 'dir').id;
    tree.createFolder(folderId, 'sub');
    fileId = tree.createFile(folderId, 'a.txt', Buffer.from('hello')).id;
  });
  after(() => fake?.close());

  const FIELDS = 'type,id,name,size,sha1,modified_at,etag';

  test('folder items by offset and by marker', async () => {
    await assertRecorded(
      await get(`/folders/${folderId}/items?limit=1&fields=${FIELDS}`),
      'box',
      'folder_items',
    );
    const res = await get(`/folders/${folderId}/items?limit=1&usemarker=true&fields=${FIELDS}`);
    const page = (await res.clone().json()) as { next_marker: string | null };
    assert.ok(page.next_marker, 'a page of one of two items');
    await assertRecorded(res, 'box', 'folder_items_marker');
  });

  test('the file resource', async () => {
    await assertRecorded(await get(`/files/${fileId}?fields=${FIELDS}`), 'box', 'file');
  });

  test('404 not_found, 409 item_name_in_use, 401 with an empty body', async () => {
    await assertRecorded(await get('/files/999999999'), 'box', 'error_not_found');
    const res = await fetch(
      `${fake.apiUrl}/2.0/folders`,
      json(tokens.access_token, { name: 'sub', parent: { id: folderId } }),
    );
    await assertRecorded(res, 'box', 'error_conflict');
    await assertRecorded(await get(`/files/${fileId}`, 'bogus'), 'box', 'error_unauthorized');
  });

  test('429 rate_limit_exceeded with Retry-After', async () => {
    fake.throttleNext(1, 5);
    await assertRecorded(await get(`/files/${fileId}`), 'box', 'rate_limit');
  });

  test('token endpoint: a refresh, and invalid_grant', async () => {
    const grant = { grant_type: 'refresh_token', client_id: 'app', client_secret: 'secret' };
    await assertRecorded(
      await fetch(fake.tokenUrl, form({ ...grant, refresh_token: tokens.refresh_token })),
      'box',
      'token',
    );
    await assertRecorded(
      await fetch(fake.tokenUrl, form({ ...grant, refresh_token: tokens.refresh_token })),
      'box',
      'token_invalid_grant',
    );
  });
});

describe('the fake GCS answers in the recorded shapes', () => {
  const email = 'shapes@ferry-test.iam.gserviceaccount.com';
  const keys = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  let fake: FakeGcs;
  let token: string;
  const get = (path: string, auth = token) => fetch(`${fake.url}${path}`, bearer(auth));

  /** A JWT-bearer assertion signed with the account's key (RFC 7523), as google-auth-library makes it. */
  function assertion(privateKey: string): string {
    const now = Math.floor(Date.now() / 1000);
    const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const unsigned = `${part({ alg: 'RS256', typ: 'JWT' })}.${part({
      iss: email,
      scope: 'https://www.googleapis.com/auth/devstorage.read_write',
      aud: fake.tokenUrl,
      iat: now,
      exp: now + 3600,
    })}`;
    return `${unsigned}.${createSign('RSA-SHA256').update(unsigned).sign(privateKey, 'base64url')}`;
  }
  const tokenRequest = (signed: string) =>
    fetch(
      fake.tokenUrl,
      form({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: signed }),
    );

  before(async () => {
    fake = await FakeGcs.start({ pageSize: 2 });
    fake.oauth.addAccount(email, keys.publicKey);
    const res = await tokenRequest(assertion(keys.privateKey));
    token = ((await res.json()) as { access_token: string }).access_token;
    const bucket = await fetch(`${fake.url}/storage/v1/b?project=p`, json(token, { name: 'shapes' }));
    assert.equal(bucket.status, 200);
    for (const name of ['a.txt', 'dir/b.txt', 'dir/c.txt', 'z.txt']) {
      const res = await fetch(`${fake.url}/upload/storage/v1/b/shapes/o?uploadType=media&name=${name}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
        body: 'hello',
      });
      assert.equal(res.status, 200, await res.text());
    }
  });
  after(() => fake?.close());

  test('objects.list pages: items, prefixes, nextPageToken', async () => {
    const res = await get('/storage/v1/b/shapes/o?delimiter=/');
    const page = (await res.clone().json()) as Record<string, unknown>;
    assert.ok(page.nextPageToken && page.prefixes && page.items, 'a page with an item, a prefix and more');
    await assertRecorded(res, 'gcs', 'objects_list');
  });

  test('objects.get', async () => {
    await assertRecorded(await get('/storage/v1/b/shapes/o/a.txt'), 'gcs', 'object');
  });

  test('404 notFound, 401 authError', async () => {
    await assertRecorded(await get('/storage/v1/b/shapes/o/nope'), 'gcs', 'error_not_found');
    await assertRecorded(
      await get('/storage/v1/b/shapes/o/a.txt', 'ya29.bogus'),
      'gcs',
      'error_unauthorized',
    );
  });

  test('429 rateLimitExceeded and 503 backendError, with Retry-After', async () => {
    fake.throttleNext(1, { retryAfter: 10 });
    await assertRecorded(await get('/storage/v1/b/shapes/o/a.txt'), 'gcs', 'rate_limit');
    fake.throttleNext(1, { status: 503, retryAfter: 10 });
    await assertRecorded(await get('/storage/v1/b/shapes/o/a.txt'), 'gcs', 'unavailable_503');
  });

  test('token endpoint: a JWT-bearer grant, and invalid_grant for a wrong key', async () => {
    await assertRecorded(await tokenRequest(assertion(keys.privateKey)), 'gcs', 'token');
    const wrong = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    await assertRecorded(await tokenRequest(assertion(wrong.privateKey)), 'gcs', 'token_invalid_grant');
  });
});
