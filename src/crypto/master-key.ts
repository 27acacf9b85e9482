// Where the master key comes from: FERRY_MASTER_KEY (base64 of 32 bytes), or a key generated once into
// <data dir>/master.key with mode 0600. Several processes on one PostgreSQL must share the same key:
// set FERRY_MASTER_KEY for them (docs/operations in README). In production the key is kept apart from
// the data (docs/api.md, "Files on disk"): a copy of the data dir with master.key in it opens every secret.
import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../config.js';
import { ensureDataDir, PRIVATE_FILE_MODE } from '../data-dir.js';
import type { Secret } from '../secret.js';
import { type MasterKey, masterKeyFrom } from './envelope.js';

export function loadMasterKey(dataDir: string, configured: Secret | undefined): MasterKey {
  if (configured) {
    const bytes = Buffer.from(configured.reveal().trim(), 'base64');
    if (bytes.length !== 32) {
      throw new ConfigError('FERRY_MASTER_KEY must be the base64 encoding of exactly 32 bytes');
    }
    return masterKeyFrom(bytes);
  }
  ensureDataDir(dataDir);
  const file = join(dataDir, 'master.key');
  try {
    return masterKeyFrom(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
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
