// The rate limit per workspace (docs/api.md, "Rate limits and caps"): named buckets (list, preview,
// transfer, share, send, tokens, locations, webhooks, copy, files, schedules), each with its accepted
// requests per rolling minute, exact across processes. An accept is a row of rate_accepts kept until
// its window has passed; a place is taken in one statement
// (src/db/migrations/2026-11-26-workspace-rate-limits.ts): on PostgreSQL a function that takes the
// workspace's lock for the bucket, reads and records; on SQLite a conditional insert, which runs under
// the database's write lock from its first read. Only a refusal reads again, to say when a place frees
// up.
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Clock } from '../clock.js';
import type { RateBucket } from '../config.js';
import type { Db } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { FerryError } from '../errors.js';

export const RATE_WINDOW_MS = 60_000;

/** What each bucket is called in a refusal's message. */
const WHAT: Record<RateBucket, string> = {
  copy: 'copies',
  list: 'listings',
  preview: 'previews',
  transfer: 'moves, removes and pulls',
  share: 'shares',
  send: 'sends',
  tokens: 'API key changes',
  locations: 'location changes',
  webhooks: 'webhook changes',
  files: 'file uploads and downloads',
  schedules: 'schedule changes',
};

export class RateLimits {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly perMinute: Readonly<Record<RateBucket, number>>,
  ) {}

  /** Takes a place in the workspace's bucket, or throws rate_limited with the seconds to wait. */
  async take(workspaceId: string, bucket: RateBucket): Promise<void> {
    await this.#take(this.db.kysely, workspaceId, bucket, this.clock.now());
  }

  /**
   * Runs `accept` in a transaction that first takes a place in the bucket: when `accept` fails, the
   * place goes back with everything else it wrote (copy: the place and the queued work are one step).
   */
  within<T>(
    workspaceId: string,
    bucket: RateBucket,
    accept: (trx: Transaction<Database>) => Promise<T>,
  ): Promise<T> {
    const now = this.clock.now();
    return this.db.kysely.transaction().execute(async (trx) => {
      await this.#take(trx, workspaceId, bucket, now);
      return accept(trx);
    });
  }

  async #take(db: Kysely<Database>, workspaceId: string, bucket: RateBucket, now: number): Promise<void> {
    const limit = this.perMinute[bucket];
    let freesAt: number | null;
    if (this.db.dialect === 'postgres') {
      const { rows } = await sql<{ frees_at: number | null }>`
        select ferry_rate_take(${workspaceId}, ${bucket}, cast(${now} as bigint),
                               cast(${RATE_WINDOW_MS} as bigint), cast(${limit} as integer)) as frees_at`.execute(
        db,
      );
      freesAt = rows[0]?.frees_at ?? null;
    } else {
      const { rows } = await sql<{ accepted_at: number }>`
        insert into rate_accepts (workspace_id, bucket, accepted_at, expires_at)
        select ${workspaceId}, ${bucket}, ${now}, ${now + RATE_WINDOW_MS}
        where (select count(*) from rate_accepts
               where workspace_id = ${workspaceId} and bucket = ${bucket} and expires_at > ${now}) < ${limit}
        returning accepted_at`.execute(db);
      freesAt = rows.length > 0 ? null : await this.#freesAt(db, workspaceId, bucket, now, limit);
    }
    if (freesAt === null) return;
    const wait = Math.max(1, Math.ceil((Number(freesAt) - now) / 1000));
    throw new FerryError(
      'rate_limited',
      `at most ${limit} ${WHAT[bucket]} per minute in a workspace; retry in ${wait} s`,
      { retryAfterSeconds: wait },
    );
  }

  /** When the oldest of the places that fill the bucket frees up. */
  async #freesAt(
    db: Kysely<Database>,
    workspaceId: string,
    bucket: RateBucket,
    now: number,
    limit: number,
  ): Promise<number> {
    const row = await db
      .selectFrom('rate_accepts')
      .select('expires_at')
      .where('workspace_id', '=', workspaceId)
      .where('bucket', '=', bucket)
      .where('expires_at', '>', now)
      .orderBy('expires_at', 'desc')
      .offset(limit - 1)
      .limit(1)
      .executeTakeFirst();
    return row?.expires_at ?? now;
  }
}
