// The stores classify each provider's recorded error answers (test/fakes/<provider>/fixtures) as the
// store contract says (src/stores/contract.ts; docs/api.md, "Errors"): not found, conflict, rejected
// credentials, throttled with the Retry-After the answer carries, transient. The fake serves the
// recording itself in place of its own answer. (The token endpoint's recorded answers are read by the
// refresher, not the stores: test/refresher/refresher.test.ts.)
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { type ErrorKind, isFerryError } from '../../src/errors.js';
import { createEgress } from '../../src/net/egress.js';
import { Secret } from '../../src/secret.js';
import { open as openBox } from '../../src/stores/box/index.js';
import { DEFAULT_OAUTH_APPS } from '../../src/stores/context.js';
import type { Store } from '../../src/stores/contract.js';
import { open as openDrive } from '../../src/stores/drive/index.js';
import { open as openDropbox } from '../../src/stores/dropbox/index.js';
import { open as openGcs } from '../../src/stores/gcs/index.js';
import { open as openOneDrive } from '../../src/stores/onedrive/index.js';
import { FakeBox } from '../fakes/box/server.js';
import { FakeDrive } from '../fakes/drive/server.js';
import { FakeDropbox } from '../fakes/dropbox/server.js';
import { type FixtureProvider, fixture } from '../fakes/fixtures.js';
import { FakeGcs } from '../fakes/gcs/server.js';
import { FakeOneDrive } from '../fakes/onedrive/server.js';
import type { FakeServer } from '../fakes/server.js';
import { oauthContext, oauthLocation } from './oauth-harness.js';

interface Case {
  fixture: string;
  kind: ErrorKind;
}

interface Subject {
  server: FakeServer;
  store: Store;
  /** An object that exists, so that only the recorded answer can fail the call. */
  path: string;
  close(): Promise<void>;
}

function subjectOf(
  fake: { server: FakeServer; close(): Promise<void> },
  store: Store,
  path: string,
): Subject {
  return {
    server: fake.server,
    store,
    path,
    close: async () => {
      await store.close();
      await fake.close();
    },
  };
}

const body = (text: string) => Readable.from([Buffer.from(text)]);

async function failureOf(promise: Promise<unknown>): Promise<{ kind: string; retryAfterSeconds?: number }> {
  try {
    await promise;
    return { kind: 'ok' };
  } catch (err) {
    if (!isFerryError(err)) return { kind: `not a FerryError: ${String(err)}` };
    return err.retryAfterSeconds === undefined
      ? { kind: err.kind }
      : { kind: err.kind, retryAfterSeconds: err.retryAfterSeconds };
  }
}

function describeRecordedErrors(
  provider: FixtureProvider,
  cases: Case[],
  start: () => Promise<Subject>,
): void {
  describe(`${provider}: the store classifies the recorded error answers`, () => {
    let subject: Subject;
    before(async () => {
      subject = await start();
    });
    after(() => subject?.close());

    for (const c of cases) {
      const recorded = fixture(provider, c.fixture);
      const retryAfter = recorded.headers['retry-after'];
      const expected =
        retryAfter === undefined ? { kind: c.kind } : { kind: c.kind, retryAfterSeconds: Number(retryAfter) };
      const said = retryAfter === undefined ? c.kind : `${c.kind}, Retry-After ${retryAfter} s honoured`;
      test(`${c.fixture} (HTTP ${recorded.status}) is ${said}`, async () => {
        subject.server.clearFaults();
        subject.server.injectFixture(recorded);
        try {
          assert.deepEqual(await failureOf(subject.store.stat(subject.path)), expected);
        } finally {
          subject.server.clearFaults();
        }
      });
    }
  });
}

describeRecordedErrors(
  'dropbox',
  [
    { fixture: 'error_not_found', kind: 'not_found' },
    { fixture: 'error_conflict', kind: 'conflict' },
    { fixture: 'error_expired_token', kind: 'credentials_rejected' },
    { fixture: 'error_invalid_token', kind: 'credentials_rejected' },
    { fixture: 'rate_limit', kind: 'throttled' },
  ],
  async () => {
    const fake = await new FakeDropbox().start();
    const tokens = fake.oauth.issue('dbid:recorded');
    const store = openDropbox(
      oauthLocation('dropbox', tokens.access_token, tokens.refresh_token),
      oauthContext('dropbox', fake),
    );
    await store.write('dir/a.txt', body('hello'), { size: 5 });
    return subjectOf(fake, store, 'dir/a.txt');
  },
);

describeRecordedErrors(
  'drive',
  [
    { fixture: 'error_not_found', kind: 'not_found' },
    { fixture: 'error_unauthorized', kind: 'credentials_rejected' },
    { fixture: 'rate_limit_user', kind: 'throttled' },
    { fixture: 'rate_limit_429', kind: 'throttled' },
    { fixture: 'error_backend', kind: 'transient' },
  ],
  async () => {
    const fake = await FakeDrive.start();
    const tokens = fake.oauth.issue('drive-recorded');
    fake.put('dir/a.txt', 'hello');
    const store = openDrive(
      oauthLocation('drive', tokens.access_token, tokens.refresh_token),
      oauthContext('drive', fake),
    );
    return subjectOf(fake, store, 'dir/a.txt');
  },
);

describeRecordedErrors(
  'onedrive',
  [
    { fixture: 'error_not_found', kind: 'not_found' },
    { fixture: 'error_conflict', kind: 'conflict' },
    { fixture: 'error_unauthorized', kind: 'credentials_rejected' },
    { fixture: 'throttled_429', kind: 'throttled' },
    { fixture: 'unavailable_503', kind: 'throttled' },
  ],
  async () => {
    const fake = await FakeOneDrive.start();
    const tokens = fake.oauth.issue('onedrive-recorded');
    fake.put('dir/a.txt', 'hello');
    const store = openOneDrive(
      oauthLocation('onedrive', tokens.access_token, tokens.refresh_token),
      oauthContext('onedrive', fake),
    );
    return subjectOf(fake, store, 'dir/a.txt');
  },
);

describeRecordedErrors(
  'box',
  [
    { fixture: 'error_not_found', kind: 'not_found' },
    { fixture: 'error_conflict', kind: 'conflict' },
    { fixture: 'error_unauthorized', kind: 'credentials_rejected' },
    { fixture: 'rate_limit', kind: 'throttled' },
  ],
  async () => {
    const fake = await new FakeBox().start();
    const tokens = fake.oauth.issue('box-recorded');
    const tree = fake.tree('box-recorded');
    tree.createFile(tree.createFolder('0', 'dir').id, 'a.txt', Buffer.from('hello'));
    const store = openBox(
      oauthLocation('box', tokens.access_token, tokens.refresh_token),
      oauthContext('box', fake),
    );
    return subjectOf(fake, store, 'dir/a.txt');
  },
);

describeRecordedErrors(
  'gcs',
  [
    { fixture: 'error_not_found', kind: 'not_found' },
    { fixture: 'error_unauthorized', kind: 'credentials_rejected' },
    { fixture: 'rate_limit', kind: 'throttled' },
    { fixture: 'unavailable_503', kind: 'throttled' },
  ],
  async () => {
    const email = 'recorded@ferry-test.iam.gserviceaccount.com';
    const keys = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    const fake = await FakeGcs.start();
    fake.oauth.addAccount(email, keys.publicKey);
    fake.state.createBucket('recorded', 'ferry-test');
    fake.state.put('recorded', 'dir/a.txt', Buffer.from('hello'), 'text/plain');
    const store = openGcs(
      {
        id: 'loc-gcs-recorded',
        provider: 'gcs',
        metadata: { endpoint: fake.url },
        secret: new Secret({
          service_account_json: {
            type: 'service_account',
            project_id: 'ferry-test',
            private_key_id: 'placeholder-key-id',
            private_key: keys.privateKey,
            client_email: email,
            client_id: '1234567890',
            token_uri: fake.tokenUrl,
          },
        }),
      },
      { egress: createEgress(['127.0.0.1']), oauthApps: DEFAULT_OAUTH_APPS },
    );
    return subjectOf(fake, store, 'recorded/dir/a.txt');
  },
);
