// The keyring of a master-key rotation (docs/security.md, "Rotating the master key"): FERRY_MASTER_KEY
// seals, FERRY_MASTER_KEY_PREVIOUS only opens; re-wrapping changes the wrapped data key alone and keeps
// the record bound to its row; settings that would break a rotation are refused without showing a key.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { Keyring, masterKeyFrom } from '../../src/crypto/envelope.js';
import { loadKeyring } from '../../src/crypto/master-key.js';

const dir = mkdtempSync(join(tmpdir(), 'ferry-keyring-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const newKey = () => randomBytes(32).toString('base64');
const keyring = (...keys: string[]) => new Keyring(keys.map((k) => masterKeyFrom(Buffer.from(k, 'base64'))));
const keyringFrom = (env: Record<string, string>, generate = true) => {
  const config = loadConfig({ FERRY_DATA_DIR: dir, ...env });
  return loadKeyring(config.dataDir, config.masterKey, config.previousMasterKeys, { generate });
};

test('re-wrapping names the current key, keeps the body, and opens under the current key alone', () => {
  const [a, b] = [newKey(), newKey()];
  const sealed = keyring(a).seal('the secret', 'row-1');
  const rewrapped = keyring(b, a).rewrap(sealed, 'row-1');
  const [, kid, wrapped, ...body] = rewrapped.split('.');
  const [, oldKid, oldWrapped, ...oldBody] = sealed.split('.');
  assert.equal(kid, keyring(b).currentId);
  assert.notEqual(kid, oldKid);
  assert.notEqual(wrapped, oldWrapped);
  assert.deepEqual(body, oldBody, 'iv, ciphertext and tag are kept');
  assert.equal(keyring(b).open(rewrapped, 'row-1').reveal(), 'the secret');
  assert.throws(
    () => keyring(b).open(rewrapped, 'row-2'),
    /could not be decrypted/,
    'still bound to its row',
  );
  assert.equal(keyring(b, a).rewrap(rewrapped, 'row-1'), rewrapped, 'a record under the current key is left');
});

test('FERRY_MASTER_KEY_PREVIOUS takes several keys, comma-separated; they open, the current key seals', () => {
  const [a, b, c] = [newKey(), newKey(), newKey()];
  const ring = keyringFrom({ FERRY_MASTER_KEY: c, FERRY_MASTER_KEY_PREVIOUS: ` ${a}, ${b} ` });
  assert.equal(ring.currentId, keyring(c).currentId);
  for (const old of [a, b]) assert.equal(ring.open(keyring(old).seal('s', 'r'), 'r').reveal(), 's');
  assert.equal(ring.seal('s', 'r').split('.')[1], keyring(c).currentId);
  // docs/security.md, step 2: a process given the new key as previous opens what a switched one seals.
  const switching = keyringFrom({ FERRY_MASTER_KEY: a, FERRY_MASTER_KEY_PREVIOUS: c });
  assert.equal(switching.open(ring.seal('s', 'r'), 'r').reveal(), 's');
  assert.equal(switching.seal('s', 'r').split('.')[1], keyring(a).currentId);
});

test('a malformed previous key, or the current key listed as previous, is refused without showing a key', () => {
  const [a, b] = [newKey(), newKey()];
  assert.throws(
    () => keyringFrom({ FERRY_MASTER_KEY: a, FERRY_MASTER_KEY_PREVIOUS: `${b},bm90IDMyIGJ5dGVz` }),
    (err: Error) =>
      err.name === 'ConfigError' &&
      /FERRY_MASTER_KEY_PREVIOUS \(key 2 of 2\) must be the base64 encoding of exactly 32 bytes/.test(
        err.message,
      ) &&
      !err.message.includes(b),
  );
  assert.throws(
    () => keyringFrom({ FERRY_MASTER_KEY: a, FERRY_MASTER_KEY_PREVIOUS: a }),
    (err: Error) =>
      err.message.includes(`holds the current master key (${keyring(a).currentId})`) &&
      !err.message.includes(a),
  );
});

test('without FERRY_MASTER_KEY, the rotation takes master.key but never makes one', () => {
  assert.throws(() => keyringFrom({}, false), /FERRY_MASTER_KEY is unset and .*master\.key does not exist/);
  assert.equal(existsSync(join(dir, 'master.key')), false);
  const made = keyringFrom({});
  assert.equal(keyringFrom({}, false).currentId, made.currentId);
});
