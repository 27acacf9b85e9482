// Where the master keys come from: FERRY_MASTER_KEY (base64 of 32 bytes), or a key generated once into
// <data dir>/master.key with mode 0600; and, while a rotation runs, FERRY_MASTER_KEY_PREVIOUS, the keys
// being replaced, which open records but never seal (docs/security.md, "Rotating the master key").
// Several processes on one PostgreSQL must share the same keys: set FERRY_MASTER_KEY for them (README,
// "Running several processes on PostgreSQL"). In production the key is kept apart from the data
// (docs/api.md, "Files on disk"): a copy of the data dir with master.key in it opens every secret.
import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../config.js';
import { ensureDataDir, PRIVATE_FILE_MODE } from '../data-dir.js';
import type { Secret } from '../secret.js';
import { Keyring, type MasterKey, masterKeyFrom } from './envelope.js';

/**
 * The current key first (it seals), then the previous ones (they only open). `generate: false` (the
 * rotation) refuses to make a new master.key: re-wrapping every secret under a key that only this
 * process has would lock the service out of all of them.
 */
export function loadKeyring(
  dataDir: string,
  configured: Secret | undefined,
  previous: readonly Secret[],
  { generate = true }: { generate?: boolean } = {},
): Keyring {
  const current = loadMasterKey(dataDir, configured, generate);
  const older = previous.map((key, i) => {
    const parsed = decode(key, `FERRY_MASTER_KEY_PREVIOUS (key ${i + 1} of ${previous.length})`);
    // Named by id only: the id is public, the key is not.
    if (parsed.id === current.id) {
      throw new ConfigError(
        `FERRY_MASTER_KEY_PREVIOUS holds the current master key (${current.id}); it lists only the keys being replaced`,
      );
    }
    return parsed;
  });
  return new Keyring([current, ...older]);
}

function decode(key: Secret, name: string): MasterKey {
  const bytes = Buffer.from(key.reveal().trim(), 'base64');
  if (bytes.length !== 32) throw new ConfigError(`${name} must be the base64 encoding of exactly 32 bytes`);
  return masterKeyFrom(bytes);
}

function loadMasterKey(dataDir: string, configured: Secret | undefined, generate: boolean): MasterKey {
  if (configured) return decode(configured, 'FERRY_MASTER_KEY');
  const file = join(dataDir, 'master.key');
  if (generate) ensureDataDir(dataDir);
  try {
    return masterKeyFrom(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (!generate) {
    throw new ConfigError(
      `FERRY_MASTER_KEY is unset and ${file} does not exist: give the settings the service runs with`,
    );
  }
  const key = randomBytes(32);
  try {
    // 'wx' fails if another process created the file first; then we read theirs.
    writeFileSync(file, `${key.toString('base64')}\n`, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
    chmodSync(file, PRIVATE_FILE_MODE);
    return masterKeyFrom(key);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return masterKeyFrom(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64'));
  }
}
