// Stores a worker keeps open between objects, one per location, reopened when the location changes
// (a new secret) and dropped when it is deleted. Rows are re-read after a short time, so a location
// deleted or failed meanwhile stops the work within that time (SPEC 3.2).
import type { Kysely } from 'kysely';
import type { Database, LocationRow } from '../db/schema.js';
import type { Clock } from '../domain/clock.js';
import type { Storage } from '../domain/storage.js';
import { FerryError } from '../errors.js';
import type { Store } from '../stores/contract.js';

const ROW_TTL_MS = 2000;

interface Open {
  row: LocationRow;
  store: Store;
  readAt: number;
}

export class StoreCache {
  readonly #open = new Map<string, Open>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {}

  /** The location's row and an open store, or a FerryError saying why work on it cannot go on. */
  async get(locationId: string): Promise<{ row: LocationRow; store: Store }> {
    const now = this.clock.now();
    const cached = this.#open.get(locationId);
    if (cached && now - cached.readAt < ROW_TTL_MS) return this.usable(cached);
    const row = await this.db
      .selectFrom('locations')
      .selectAll()
      .where('id', '=', locationId)
      .executeTakeFirst();
    if (!row) {
      if (cached) await this.drop(locationId);
      throw new FerryError('credentials_rejected', `location ${locationId} was deleted`);
    }
    if (
      cached &&
      cached.row.updated_at === row.updated_at &&
      cached.row.secret_envelope === row.secret_envelope
    ) {
      cached.row = row;
      cached.readAt = now;
      return this.usable(cached);
    }
    if (cached) await this.drop(locationId);
    const open: Open = { row, store: this.storage.open(row), readAt: now };
    this.#open.set(locationId, open);
    return this.usable(open);
  }

  private usable(open: Open): { row: LocationRow; store: Store } {
    if (open.row.status !== 'active') {
      throw new FerryError(
        'credentials_rejected',
        `location ${open.row.label} (${open.row.id}) is ${open.row.status}${open.row.validation_error ? `: ${open.row.validation_error}` : ''}`,
      );
    }
    return { row: open.row, store: open.store };
  }

  private async drop(locationId: string): Promise<void> {
    const open = this.#open.get(locationId);
    this.#open.delete(locationId);
    await open?.store.close().catch(() => {});
  }

  async close(): Promise<void> {
    for (const id of [...this.#open.keys()]) await this.drop(id);
  }
}
