// Stores a worker keeps open between objects, one per location. A store is shared by every operation
// on its location and is never closed under one: a replaced secret (secret_version moves) makes the
// next operation open a new store, and the old one closes when its last operation ends. A rename, a
// refresh request or a refreshed token changes nothing here (OAuth stores read the live token at each
// request). Rows are re-read after a short time, so a location deleted or failed meanwhile stops the
// work within that time.
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database, LocationRow } from '../db/schema.js';
import { FerryError } from '../errors.js';
import type { Store } from '../stores/contract.js';

const ROW_TTL_MS = 2000;

/** What opens a location's store from its row (src/domain/storage.ts's Storage, given by the wiring). */
export interface StoreOpener {
  open(row: LocationRow): Store;
}

interface Open {
  row: LocationRow;
  store: Store;
  readAt: number;
  /** Operations using the store now. */
  users: number;
  /** Replaced or dropped: closes when `users` reaches 0. */
  retired: boolean;
}

/** A store in use; release() when the operation ends (the store may close then). */
export interface StoreUse {
  row: LocationRow;
  store: Store;
  release(): void;
}

export class StoreCache {
  readonly #open = new Map<string, Open>();
  readonly #closing = new Set<Promise<void>>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly storage: StoreOpener,
    private readonly clock: Clock,
  ) {}

  /** Runs `work` with the location's current row and store, or throws why work on it cannot go on. */
  async use<T>(
    locationId: string,
    work: (use: { row: LocationRow; store: Store }) => Promise<T>,
  ): Promise<T> {
    const use = await this.acquire(locationId);
    try {
      return await work(use);
    } finally {
      use.release();
    }
  }

  /** The location's row and an open store, held until release(). */
  async acquire(locationId: string): Promise<StoreUse> {
    const open = await this.#current(locationId);
    usable(open.row);
    open.users++;
    let released = false;
    return {
      row: open.row,
      store: open.store,
      release: () => {
        if (released) return;
        released = true;
        open.users--;
        if (open.retired && open.users === 0) this.#close(open);
      },
    };
  }

  async #current(locationId: string): Promise<Open> {
    const now = this.clock.now();
    const cached = this.#open.get(locationId);
    if (cached && now - cached.readAt < ROW_TTL_MS) return cached;
    const row = await this.db
      .selectFrom('locations')
      .selectAll()
      .where('id', '=', locationId)
      .executeTakeFirst();
    if (!row) {
      if (cached) this.#retire(cached);
      throw new FerryError('credentials_rejected', `location ${locationId} was deleted`);
    }
    // Another caller may have opened it while this one read the row.
    const latest = this.#open.get(locationId);
    if (latest && latest.row.secret_version === row.secret_version) {
      latest.row = row;
      latest.readAt = now;
      return latest;
    }
    if (latest) this.#retire(latest);
    const open: Open = { row, store: this.storage.open(row), readAt: now, users: 0, retired: false };
    this.#open.set(locationId, open);
    return open;
  }

  #retire(open: Open): void {
    if (this.#open.get(open.row.id) === open) this.#open.delete(open.row.id);
    open.retired = true;
    if (open.users === 0) this.#close(open);
  }

  #close(open: Open): void {
    const closing = open.store
      .close()
      .catch(() => {})
      .finally(() => this.#closing.delete(closing));
    this.#closing.add(closing);
  }

  /** Closes every store; called when the worker has stopped, so none is in use. */
  async close(): Promise<void> {
    for (const open of [...this.#open.values()]) this.#retire(open);
    await Promise.all([...this.#closing]);
  }
}

function usable(row: LocationRow): void {
  if (row.status !== 'active') {
    throw new FerryError(
      'credentials_rejected',
      `location ${row.label} (${row.id}) is ${row.status}${row.validation_error ? `: ${row.validation_error}` : ''}`,
    );
  }
}
