// The durable JSON of schedules, keys, sends and locations (src/durable/records.ts): each column reads
// back what is written, reads rows written by earlier releases, and refuses a damaged row naming the
// table, column and row, never a value (a location's secret least of all).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DurableJsonError } from '../../src/durable/codec.js';
import {
  keyLocations,
  keyScopes,
  locationMetadata,
  locationSecret,
  oauthSecret,
  scheduleAction,
  scheduleCallerLocations,
  sendRecipients,
  sendRefused,
  slotOwners,
  transferGivenFrom,
  transferGivenTo,
} from '../../src/durable/records.js';

const ROW = '0193a8f0-0000-7000-8000-000000000002';

function refusal(c: { decode(text: string, row: string): unknown }, text: string): string {
  try {
    c.decode(text, ROW);
  } catch (err) {
    assert.ok(err instanceof DurableJsonError, `a DurableJsonError, not ${String(err)}`);
    return err.message;
  }
  assert.fail(`${text} was read`);
}

test('a schedule action reads back as given, each kind; one without a kind or a target is refused', () => {
  const actions = [
    { copy: { from: 'S3/a/', to: { name: 'Box', path: 'b/' }, overwrite: 'if-missing' as const } },
    { sync: { from: 'S3/a/', to: 'Box/b/', delete: true, backup_to: 'S3/keep' } },
    { verify: { from: 'S3/a/', to: 'Box/b/', mode: 'size' as const } },
  ];
  for (const action of actions)
    assert.deepEqual(scheduleAction.decode(scheduleAction.encode(action), ROW), action);
  // A schedule from before verify and backup_to (2026-11-28-schedules): a copy with from and to only.
  assert.deepEqual(scheduleAction.decode('{"copy":{"from":"S3/a/","to":"S3/b/"}}', ROW), {
    copy: { from: 'S3/a/', to: 'S3/b/' },
  });
  assert.equal(
    refusal(scheduleAction, '{"teleport":{"from":"a","to":"b"}}'),
    `schedules.action of row ${ROW} is not JSON this version of ferry reads: /: must have required properties copy`,
  );
  assert.match(
    refusal(scheduleAction, '{"copy":'),
    /^schedules\.action of row \S+ is not JSON this version of ferry reads: not JSON$/,
  );
  assert.deepEqual(scheduleCallerLocations.decode('["l1","l2"]', ROW), ['l1', 'l2']);
  assert.match(refusal(scheduleCallerLocations, '"l1"'), /^schedules\.caller_locations of row /);
});

test("a key's scopes and locations: arrays of names; a scope a later release adds is read (the domain drops it)", () => {
  assert.deepEqual(keyScopes.decode(keyScopes.encode(['read', 'transfer']), ROW), ['read', 'transfer']);
  assert.deepEqual(keyScopes.decode('["read","telepathy"]', ROW), ['read', 'telepathy']);
  assert.equal(
    refusal(keyLocations, '[1]'),
    `api_keys.locations of row ${ROW} is not JSON this version of ferry reads: /0: must be string`,
  );
  assert.match(refusal(keyScopes, '{"read":true}'), /^api_keys\.scopes of row /);
});

test("a send's recipients and refused addresses", () => {
  const recipients = { to: ['a@example.com'], cc: [], bcc: ['b@example.com'], replyTo: [] };
  assert.deepEqual(sendRecipients.decode(sendRecipients.encode(recipients), ROW), recipients);
  assert.equal(
    refusal(sendRecipients, '{"to": ['),
    `sends.recipients of row ${ROW} is not JSON this version of ferry reads: not JSON`,
  );
  assert.match(
    refusal(sendRecipients, '{"to":["a@example.com"]}'),
    /^sends\.recipients of row .*: \/: must have required properties cc, bcc, replyTo$/,
  );
  assert.deepEqual(sendRefused.decode('["x@example.com"]', ROW), ['x@example.com']);
});

test("a location's metadata and opened secret: read as saved; a damaged one refused without a word of it", () => {
  assert.deepEqual(locationMetadata.decode('{"endpoint":"http://s3","scopes":["a"]}', ROW), {
    endpoint: 'http://s3',
    scopes: ['a'],
  });
  assert.match(refusal(locationMetadata, '[]'), /^locations\.metadata of row /);
  const secrets = [
    { access_key_id: 'AK', secret_access_key: 'SK' },
    { access_token: 'at', refresh_token: 'rt', expiry: '2030-01-01T00:00:00Z' },
    {
      service_account_json: {
        type: 'service_account' as const,
        client_email: 'e@x',
        private_key: 'pk',
        project_id: 'p',
      },
    },
  ];
  for (const secret of secrets)
    assert.deepEqual(locationSecret.decode(locationSecret.encode(secret), ROW), secret);
  const damaged = refusal(oauthSecret, '{"access_token":"hunter2-token","refresh_token":7,"expiry":"x"}');
  assert.equal(
    damaged,
    `locations.secret_envelope of row ${ROW} is not JSON this version of ferry reads: /refresh_token: must be string`,
  );
  assert.doesNotMatch(refusal(locationSecret, '{"password":"hunter2"}'), /hunter2/);
  assert.doesNotMatch(refusal(locationSecret, '{"access_key_id":"hunter2"'), /hunter2/);
  // Nor through a cause: V8's SyntaxError quotes the text, and a logger prints an error's causes.
  try {
    locationSecret.decode('hunter2-not-json', ROW);
  } catch (err) {
    assert.ok(err instanceof DurableJsonError);
    assert.doesNotMatch(String((err as Error & { cause?: unknown }).cause), /hunter2/);
  }
});

test("a transfer's from and to as given, and a worker slot's owners, read back what was written and refuse another shape", () => {
  for (const given of [
    'a:b/c.txt',
    ['s3:x/1', 's3:x/2'],
    { name: 'photos', path: 'in/' },
    { id: ROW, path: '' },
  ]) {
    assert.deepEqual(transferGivenFrom.decode(transferGivenFrom.encode(given), ROW), given);
    assert.deepEqual(transferGivenTo.decode(transferGivenTo.encode(given), ROW), given);
  }
  assert.match(
    refusal(transferGivenFrom, '42'),
    /^transfers\.given_from of row \S+ is not JSON this version of ferry reads: /,
  );
  assert.match(refusal(transferGivenTo, '{"name":"photos"}'), /^transfers\.given_to of row /);
  assert.deepEqual(slotOwners.decode(slotOwners.encode(['vm:1:ab', 'vm:2:cd']), '0'), ['vm:1:ab', 'vm:2:cd']);
  assert.match(refusal(slotOwners, '{"owners":[]}'), /^holder\.owners of row /);
});
