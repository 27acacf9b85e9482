// Settling objects in batches (group commit): the objects that end while a batch is being written
// wait for it and go in the next one, each in one transaction with the job counters
// (src/lifecycle/object-settlement.ts, settleMany), and then each job touched is finished if that was its
// last object. Under load a worker commits once for many objects; alone, an object is written at once.
// The first write waits for the end of the current turn of the event loop (setImmediate), so objects
// whose answers arrived together go together even where a commit never yields (SQLite's is
// synchronous, so without this every batch held one object). A batch the database cannot take because
// it is away (src/db/unavailable.ts) is written again after a backoff, for as long as a lease lasts: an
// object copied during a database restart is settled once it is back, not counted as a crash and
// copied again (docs/api.md, "The database going away").

import type { Clock } from '../clock.js';
import type { Db } from '../db/database.js';
import * as jobs from '../lifecycle/jobs.js';
import { type ObjectSettlement, settleMany } from '../lifecycle/object-settlement.js';
import { whileAway } from '../queue/loop.js';

/** Most objects in one transaction. */
const BATCH = 64;

/** Runs a write, or tries it again while the database is away (SettleBatcher). */
type Retry = <T>(write: () => Promise<T>) => Promise<T>;

/** Settles `items` as one batch, then finishes each job they belong to if nothing is left of it. */
export async function settleObjects(
  db: Db,
  clock: Clock,
  owner: string,
  items: ObjectSettlement[],
  retry: Retry = (write) => write(),
): Promise<boolean[]> {
  let tries = 0;
  const written = await retry(() => {
    tries++;
    return settleMany(db.kysely, owner, items);
  });
  const ended = new Set<string>();
  items.forEach(({ object, settlement }, i) => {
    // A try the database dropped during its commit may have committed: the next finds the objects
    // settled (not written by it), and their jobs are looked at all the same.
    if ((written[i] || tries > 1) && settlement.kind !== 'again') ended.add(object.job_id);
  });
  for (const jobId of ended) await retry(() => jobs.finishIfDone(db.kysely, jobId, clock.now()));
  return written;
}

interface Waiting {
  item: ObjectSettlement;
  resolve: (written: boolean) => void;
  reject: (err: unknown) => void;
}

export class SettleBatcher {
  #waiting: Waiting[] = [];
  #writing = false;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly owner: string,
    /** How long a batch is tried again while the database is away (the worker's lease). */
    private readonly patienceMs: number,
  ) {}

  /** Resolves once the object's settlement is committed: false when its lease was lost. */
  settle(item: ObjectSettlement): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject });
      if (!this.#writing) {
        this.#writing = true;
        setImmediate(() => void this.#write());
      }
    });
  }

  async #write(): Promise<void> {
    try {
      while (this.#waiting.length > 0) {
        const batch = this.#waiting.splice(0, BATCH);
        try {
          const written = await settleObjects(
            this.db,
            this.clock,
            this.owner,
            batch.map((w) => w.item),
            (write) => whileAway(write, this.patienceMs),
          );
          for (const [i, w] of batch.entries()) w.resolve(written[i] === true);
        } catch (err) {
          for (const w of batch) w.reject(err);
        }
      }
    } finally {
      this.#writing = false;
    }
  }
}
