// The data dir and the files ferry keeps in it (docs/api.md, "Files on disk"): the SQLite database
// (ferry.db with its -wal and -shm), master.key and bootstrap-key. Only the account ferry runs as may
// read them: the dir is made 0700 and each file 0600. A dir that exists already is never changed
// (an operator may share it on purpose); one that others can enter is reported so it can be warned about.
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';

/** The data dir's mode when ferry creates it. */
export const DATA_DIR_MODE = 0o700;
/** The mode of every file ferry writes into the data dir. */
export const PRIVATE_FILE_MODE = 0o600;
/** The server's umask: whatever else it creates (now or in the future) is its own account's only. */
export const PRIVATE_UMASK = 0o077;

/** Creates the data dir (mode 0700) if it does not exist; an existing one is left as it is. */
export function ensureDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: DATA_DIR_MODE });
}

/** The permission bits of an existing data dir that grants more than its owner's, or undefined. */
export function looseDataDirMode(dataDir: string): number | undefined {
  if (!existsSync(dataDir)) return undefined;
  const mode = statSync(dataDir).mode & 0o777;
  return (mode & 0o077) === 0 ? undefined : mode;
}

/** `mode` as chmod writes it: 0755. */
export function octal(mode: number): string {
  return `0${mode.toString(8).padStart(3, '0')}`;
}

/**
 * Makes `file` private: created empty with mode 0600 when missing (so that nothing else opens it first
 * with wider bits), tightened to 0600 when it exists with wider ones.
 *
 * An existing file is changed by its path only, never opened: closing any descriptor of a file drops
 * every POSIX lock this process holds on it, and SQLite's locks on the database and its -shm are such
 * locks. A process that lost its lock on the -shm file looks absent to the next process that opens the
 * database, which then resets the -shm under it: the first process dies of SIGBUS
 * (test/db/sqlite-files.test.ts).
 */
export function privateFile(file: string): void {
  try {
    closeSync(openSync(file, 'wx', PRIVATE_FILE_MODE));
    return;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  tightenFile(file);
}

/** Tightens an existing `file` to 0600 by its path (see privateFile); a missing one is left missing. */
export function tightenFile(file: string): void {
  if (!existsSync(file)) return;
  if ((statSync(file).mode & 0o777 & ~PRIVATE_FILE_MODE) !== 0) chmodSync(file, PRIVATE_FILE_MODE);
}
