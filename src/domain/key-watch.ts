// Live answers end with their key (docs/api.md, "Live progress"): an open event stream registers the
// key it was opened with, and is told within a second when that key is revoked, expires or is gone,
// whichever process wrote the change. A write to a key is reported by the same database triggers the
// authentication cache listens to (src/domain/auth-cache.ts); each report makes one read of the keys
// watched. While reports may have been missed (the listening connection was down, another process
// committed to the SQLite file), a tick once a second reads every watched key again.
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import type { Invalidations } from './auth-cache.js';

/** How often expiry and missed reports are looked at while any key is watched. */
export const KEY_WATCH_TICK_MS = 1000;

interface Watched {
  expiresAt: number | null;
  ended: Set<(reason: string) => void>;
}

export class KeyWatch {
  readonly #keys = new Map<string, Watched>();
  readonly #unsubscribe: () => void;
  #timer: NodeJS.Timeout | undefined;
  #epoch: number | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly source: Invalidations,
    private readonly tickMs: number = KEY_WATCH_TICK_MS,
  ) {
    this.#unsubscribe = source.subscribe((kind, id) => {
      if (kind === 'key') {
        if (this.#keys.has(id)) void this.#check([id]);
      } else if (kind !== 'ws') {
        void this.#check([...this.#keys.keys()]);
      }
    });
  }

  /**
   * Calls `ended` once, with the reason, when the key stops being valid; the returned function stops
   * watching. The key is read once now, so a key revoked just before the call is caught too.
   */
  watch(keyId: string, ended: (reason: string) => void): () => void {
    let watched = this.#keys.get(keyId);
    if (!watched) {
      watched = { expiresAt: null, ended: new Set() };
      this.#keys.set(keyId, watched);
    }
    const once = (reason: string) => {
      stop();
      ended(reason);
    };
    watched.ended.add(once);
    const stop = () => {
      const current = this.#keys.get(keyId);
      current?.ended.delete(once);
      if (current?.ended.size === 0) this.#keys.delete(keyId);
      if (this.#keys.size === 0 && this.#timer) {
        clearInterval(this.#timer);
        this.#timer = undefined;
      }
    };
    if (!this.#timer) {
      this.#epoch = this.source.now();
      this.#timer = setInterval(() => this.#tick(), this.tickMs);
      this.#timer.unref();
    }
    void this.#check([keyId]);
    return stop;
  }

  close(): void {
    this.#unsubscribe();
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#keys.clear();
  }

  #tick(): void {
    const epoch = this.source.now();
    if (epoch === undefined || epoch !== this.#epoch) {
      this.#epoch = epoch;
      void this.#check([...this.#keys.keys()]);
      return;
    }
    const now = this.clock.now();
    for (const [keyId, watched] of this.#keys) {
      if (watched.expiresAt !== null && watched.expiresAt <= now) this.#end(keyId, 'the API key has expired');
    }
  }

  async #check(keyIds: string[]): Promise<void> {
    if (keyIds.length === 0) return;
    let rows: Array<{ id: string; revoked_at: number | null; expires_at: number | null }>;
    try {
      rows = await this.db
        .selectFrom('api_keys')
        .select(['id', 'revoked_at', 'expires_at'])
        .where('id', 'in', keyIds)
        .execute();
    } catch {
      // The database is away: the next report or tick reads again; until then nothing is ended.
      return;
    }
    const now = this.clock.now();
    const found = new Map(rows.map((row) => [row.id, row]));
    for (const keyId of keyIds) {
      const watched = this.#keys.get(keyId);
      if (!watched) continue;
      const row = found.get(keyId);
      if (!row) this.#end(keyId, 'the API key no longer exists');
      else if (row.revoked_at !== null) this.#end(keyId, 'the API key has been revoked');
      else if (row.expires_at !== null && row.expires_at <= now) this.#end(keyId, 'the API key has expired');
      else watched.expiresAt = row.expires_at;
    }
  }

  #end(keyId: string, reason: string): void {
    const watched = this.#keys.get(keyId);
    if (!watched) return;
    for (const ended of [...watched.ended]) ended(reason);
  }
}
