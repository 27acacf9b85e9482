// A worker process's slot in its data dir, and the process that held the slot before it (the queue's
// README, "A restarted process"). A process that dies holding leases (SIGKILL, a crash, a power cut)
// leaves them to run out: nobody can tell a dead holder from a slow one by the database alone, and
// work taken from a live holder would run twice. A process restarted on the same data dir can tell,
// for the one process it succeeds: the slot is a lock the operating system holds for the process's
// life and drops when it ends, however it ends.
//
// The slot is a small SQLite file, <data dir>/worker-<n>.lock, opened in SQLite's exclusive locking
// mode: the first transaction takes an exclusive lock (a POSIX advisory lock, which the kernel releases
// when the process exits, SIGKILL included) and the connection keeps it until it is closed. A process
// takes the first slot whose lock it gets (processes sharing one data dir each get one of their own;
// another connection in the same process is refused too, SQLite tracking its own locks), reads the
// lease owner ids the slot's previous holder recorded there, and records its own before it claims
// anything. The previous holder no longer holds the lock, so it has exited: its leases may end at once
// (src/queue/leases.ts, endLeasesOf), on either database and however many processes share it, since
// nothing here asks who else is alive, only whether this one lock's holder is.
//
// What the proof needs, and where it does not hold (the slot is then merely never shared, and leases
// run out as before): the data dir on a local file system (as SQLite's own database needs), and the
// slot closed only by a process that has stopped claiming and handed its leases back (release()).
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { ensureDataDir, privateFile } from '../data-dir.js';
import { slotOwners } from '../durable/records.js';

/** Slots tried in a data dir: processes sharing one data dir beyond this get none. */
export const WORKER_SLOTS = 64;

/** Owner ids a slot keeps at most (its holder's, and predecessors whose leases are not ended yet). */
const MAX_RECORDED = 64;

export interface WorkerSlot {
  /** The slot's number in the data dir. */
  readonly index: number;
  /**
   * The lease owner ids the slot's previous holder recorded: a process that has exited. Empty for a
   * new slot.
   */
  readonly predecessors: readonly string[];
  /** Records the owner ids of this process (and any whose leases it still has to end), durably. */
  record(owners: readonly string[]): void;
  /** Gives the slot up: only once this process claims nothing more and has handed its leases back. */
  release(): void;
}

/** The file of slot `index` in `dataDir`. */
export function slotFile(dataDir: string, index: number): string {
  return join(dataDir, `worker-${index}.lock`);
}

function busy(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
}

/**
 * Takes the first free slot of `dataDir` for this process's life, with what its previous holder
 * recorded; undefined when every slot is held (or, thrown, when the data dir cannot be written).
 */
export function takeWorkerSlot(dataDir: string, slots = WORKER_SLOTS): WorkerSlot | undefined {
  ensureDataDir(dataDir);
  for (let index = 0; index < slots; index++) {
    const file = slotFile(dataDir, index);
    privateFile(file);
    // timeout 0: a held slot answers busy at once rather than waiting for a lock held for life.
    const db = new SQLite(file, { timeout: 0 });
    try {
      db.pragma('locking_mode = EXCLUSIVE');
      db.exec('begin exclusive');
      db.exec('create table if not exists holder (owners text not null)');
      const row = db.prepare('select owners from holder').get() as { owners: string } | undefined;
      db.exec('commit');
      return slotOf(db, index, row === undefined ? [] : slotOwners.decode(row.owners, `${index}`));
    } catch (err) {
      db.close();
      if (busy(err)) continue;
      throw err;
    }
  }
  return undefined;
}

function slotOf(db: SQLite.Database, index: number, predecessors: string[]): WorkerSlot {
  let open = true;
  return {
    index,
    predecessors,
    record(owners) {
      const kept = slotOwners.encode([...new Set(owners)].slice(0, MAX_RECORDED));
      db.transaction(() => {
        db.prepare('delete from holder').run();
        db.prepare('insert into holder (owners) values (?)').run(kept);
      })();
    },
    release() {
      if (!open) return;
      open = false;
      db.close();
    },
  };
}
