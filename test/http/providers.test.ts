// docs/api.md "Providers" through HTTP, on both databases: GET /v1/providers serves each store's
// declaration, and the secret check reads the same declaration, so a secret made of exactly the fields
// the answer lists is accepted and one without any of them is refused.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ProviderField, ProviderList } from '../../src/api/providers.js';
import { PROVIDERS } from '../../src/providers.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { eachDatabase, unique } from '../support/fixtures.js';

/** A value of a declared field's type that the secret check accepts. */
function acceptedValue(field: ProviderField): unknown {
  switch (field.type) {
    case 'time':
      return '2030-01-31T12:00:00Z';
    case 'service-account-key':
      return {
        type: 'service_account',
        client_email: 'ferry@ferry-test.iam.gserviceaccount.com',
        private_key: `-----BEGIN PRIVATE KEY-----\n${unique('PK')}\n-----END PRIVATE KEY-----\n`,
      };
    case 'boolean':
      return true;
    case 'url':
      return 'https://storage.example.com';
    case 'string':
      return unique(field.key);
  }
}

await eachDatabase('providers', (database) => {
  let t: TestApp;
  let list: ProviderList;
  before(async () => {
    t = await startTestApp(database);
    const res = await t.request({ method: 'GET', url: '/v1/providers' });
    assert.equal(res.statusCode, 200, res.body);
    list = res.json();
  });
  after(() => t.close());

  test('GET /v1/providers lists every provider in the enum order, each as its store declares it', () => {
    assert.deepEqual(
      list.providers.map((p) => p.id),
      [...PROVIDERS],
    );
    const s3 = list.providers.find((p) => p.id === 's3');
    assert.deepEqual(s3, {
      id: 's3',
      name: 'Amazon S3 (or S3-compatible)',
      credentials: 'access-key',
      secret: [
        { key: 'access_key_id', label: 'Access key ID', type: 'string', required: true, sensitive: true },
        {
          key: 'secret_access_key',
          label: 'Secret access key',
          type: 'string',
          required: true,
          sensitive: true,
        },
      ],
      metadata: [
        {
          key: 'endpoint',
          label: 'Endpoint (optional)',
          help: 'Another server (self-hosted, an emulator): an http(s) URL',
          type: 'url',
          required: false,
          sensitive: false,
        },
        { key: 'region', label: 'Region (optional)', type: 'string', required: false, sensitive: false },
        {
          key: 'force_path_style',
          label: 'Path-style addressing',
          help: 'Default: yes, except on s3 without an endpoint',
          type: 'boolean',
          required: false,
          sensitive: false,
        },
      ],
      hashes: ['md5'],
      listing_hashes: ['md5'],
      features: {
        bucket_listing: true,
        bucket_word: 'bucket',
        copy: true,
        move: false,
        resumable: true,
        create_bucket: true,
      },
    });
  });

  test('what each provider declares: credentials and rotation, hashes, listing hashes, buckets and moves', () => {
    const by = Object.fromEntries(list.providers.map((p) => [p.id, p]));
    const summary = (id: string) => {
      const p = by[id];
      assert.ok(p, id);
      return [
        p.credentials,
        p.rotation_class ?? '-',
        p.hashes.join('+'),
        p.listing_hashes.join('+') || '-',
        p.features.bucket_word ?? '-',
        p.features.move ? 'move' : '-',
        p.metadata.map((f) => f.key).join('+') || '-',
      ].join(' ');
    };
    assert.deepEqual(Object.fromEntries(PROVIDERS.map((id) => [id, summary(id)])), {
      s3: 'access-key - md5 md5 bucket - endpoint+region+force_path_style',
      r2: 'access-key - md5 md5 bucket - account_id+endpoint+region+force_path_style',
      wasabi: 'access-key - md5 md5 bucket - endpoint+region+force_path_style',
      b2: 'access-key - md5 - bucket - endpoint+region+force_path_style',
      gcs: 'service-account - md5+crc32c md5+crc32c bucket - endpoint',
      azureblob: 'access-key - md5 md5 container - endpoint',
      dropbox: 'oauth oauth-stable dropbox - - move -',
      drive: 'oauth oauth-stable md5+sha1+sha256 - - move -',
      onedrive: 'oauth oauth-single-use quickxor+sha1 - - move scopes',
      box: 'oauth oauth-single-use sha1 - - move -',
    });
    // The account name is no secret: a form shows it as typed.
    assert.deepEqual(
      by.azureblob?.secret.map((f) => [f.key, f.sensitive]),
      [
        ['access_key_id', false],
        ['secret_access_key', true],
      ],
    );
  });

  test('a secret of exactly the listed fields is accepted for every provider, and one without any of them is 422 naming it', async () => {
    for (const provider of list.providers) {
      const secret = Object.fromEntries(provider.secret.map((f) => [f.key, acceptedValue(f)]));
      const made = await t.request({
        method: 'POST',
        url: '/v1/locations',
        payload: { provider: provider.id, label: unique(provider.id), secret },
      });
      assert.equal(made.statusCode, 201, `${provider.id}: ${made.body}`);
      for (const field of provider.secret) {
        const { [field.key]: _left, ...without } = secret;
        const refused = await t.request({
          method: 'POST',
          url: '/v1/locations',
          payload: { provider: provider.id, label: unique(provider.id), secret: without },
        });
        assert.equal(refused.statusCode, 422, `${provider.id} without ${field.key}: ${refused.body}`);
        assert.match(refused.json().message, new RegExp(`missing: ${field.key}`));
      }
    }
  });

  test('GET /v1/providers needs a key like every operation', async () => {
    const res = await t.request({ method: 'GET', url: '/v1/providers', token: null });
    assert.equal(res.statusCode, 401, res.body);
  });
});
