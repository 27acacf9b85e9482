// Password attempts on a share link (docs/api.md, "Share links"). A password is kept as an argon2id
// hash. Attempts are counted in the database, per link and client address and per link, within a
// rolling minute, and the count and the record are one step, so the limits are exact across
// processes; a wrong attempt is recorded in the audit log.
import { verify } from '@node-rs/argon2';
import { type Kysely, sql } from 'kysely';
import { PASSWORD_MAX } from '../../api/input.js';
import type { Clock } from '../../clock.js';
import type { Db } from '../../db/database.js';
import type { Database, ShareRow } from '../../db/schema.js';
import { newId } from '../../ids.js';
import { record } from '../audit/audit.js';

/** What a password attempt comes to: 429 with the seconds to wait when no guess is left. */
export type PasswordAnswer = 'right' | 'wrong' | { retryAfterSeconds: number };

/**
 * The password guesses allowed in any rolling minute (docs/api.md, "Share links" and "Rate limits and
 * caps"): per client address; per link for addresses that guessed wrong; and per link for everyone.
 */
export interface GuessLimits {
  perAddress: number;
  perLink: number;
  perLinkMax: number;
}
const GUESS_WINDOW_MS = 60_000;

export class SharePasswords {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly guesses: GuessLimits,
  ) {}

  /**
   * Tries a password on a link (docs/api.md, "Share links"). The attempt is recorded before the password
   * is checked, by a statement that records it only while there is room, so that guesses at the same
   * moment, in any process, cannot pass the limits together: each takes a place or none is left. Within
   * a rolling minute: an address may have `perAddress` attempts; an address that has guessed wrong on
   * the link may try only while the link has had fewer than `perLink`; an address that has not may try
   * while the link has had fewer than `perLinkMax`, so that guessers from many addresses do not lock
   * the right password out, while the link still sees at most `perLinkMax` attempts a minute. A right
   * password gives its place back; a wrong one keeps it for the minute. argon2 compares in constant time.
   */
  async tryPassword(
    row: ShareRow,
    password: string,
    client: string,
    userAgent?: string,
  ): Promise<PasswordAnswer> {
    if (row.password_hash === null) return 'right';
    const attempt = await this.#recordAttempt(row, client);
    if (attempt === undefined) return { retryAfterSeconds: await this.#guessWait(row, client) };
    const right =
      password.length <= PASSWORD_MAX && (await verify(row.password_hash, password).catch(() => false));
    if (right) {
      await this.db.kysely.deleteFrom('share_guesses').where('id', '=', attempt).execute();
      return 'right';
    }
    // The wrong guess keeps its place; the link's old guesses go, and the failure is recorded in the
    // audit log (docs/api.md, "Audit log"), in one transaction. (The attempt's own row was written
    // before argon2 ran, so that no transaction waits on it.)
    const now = this.clock.now();
    await this.db.kysely.transaction().execute(async (trx) => {
      await trx
        .deleteFrom('share_guesses')
        .where('share_id', '=', row.id)
        .where('at', '<=', now - GUESS_WINDOW_MS)
        .execute();
      await record(
        trx,
        { workspaceId: row.workspace_id, keyId: null, ip: client, userAgent },
        { action: 'share.password_failed', target: row.id, status: 401 },
        now,
      );
    });
    return 'wrong';
  }

  /** The id of the attempt recorded, or undefined when `client` has no guess left on the link. */
  async #recordAttempt(row: ShareRow, client: string): Promise<string | undefined> {
    const { perAddress, perLink, perLinkMax } = this.guesses;
    const id = newId();
    const now = this.clock.now();
    const since = now - GUESS_WINDOW_MS;
    const record = async (db: Kysely<Database>) =>
      (
        await sql<{ id: string }>`
          insert into share_guesses (id, share_id, client, at)
          select cast(${id} as text), cast(${row.id} as text), cast(${client} as text), cast(${now} as bigint)
          from (select
                  (select count(*) from share_guesses
                    where share_id = ${row.id} and client = ${client} and at > ${since}) as mine,
                  (select count(*) from share_guesses
                    where share_id = ${row.id} and at > ${since}) as everyone) counts
          where mine < ${perAddress}
            and (everyone < ${perLink} or (mine = 0 and everyone < ${perLinkMax}))
          returning id`.execute(db)
      ).rows[0]?.id;
    // SQLite runs a writing statement under the database's write lock from its first read, so the
    // counts and the insert are one step for every process on the file. PostgreSQL reads each
    // statement's counts from a snapshot taken as it starts, so two statements at once would both
    // see room: the share's row is locked first, and the statement that follows waits its turn and
    // sees the attempts committed before it.
    if (this.db.dialect !== 'postgres') return record(this.db.kysely);
    return this.db.kysely.transaction().execute(async (trx) => {
      await sql`select id from shares where id = ${row.id} for update`.execute(trx);
      return record(trx);
    });
  }

  /** Seconds until `client` may try a password again (at least 1), by the rules of #recordAttempt. */
  async #guessWait(row: ShareRow, client: string): Promise<number> {
    const { perAddress, perLink, perLinkMax } = this.guesses;
    const now = this.clock.now();
    const guesses = await this.db.kysely
      .selectFrom('share_guesses')
      .select(['client', 'at'])
      .where('share_id', '=', row.id)
      .where('at', '>', now - GUESS_WINDOW_MS)
      .orderBy('at', 'asc')
      .execute();
    const mine = guesses.filter((g) => g.client === client);
    // When the link has fewer than `n` attempts in the minute again.
    const below = (n: number) =>
      guesses.length < n ? now : (guesses[guesses.length - n]?.at ?? now) + GUESS_WINDOW_MS;
    let until: number;
    if (mine.length === 0) {
      until = below(perLinkMax);
    } else {
      // A guesser may try again once the link is below perLink, or once its own guesses have aged out
      // and the link is below perLinkMax, whichever comes first; and never before it is below perAddress.
      const ownClear = (mine[mine.length - 1]?.at ?? now) + GUESS_WINDOW_MS;
      until = Math.min(below(perLink), Math.max(ownClear, below(perLinkMax)));
      if (mine.length >= perAddress) {
        until = Math.max(until, (mine[mine.length - perAddress]?.at ?? now) + GUESS_WINDOW_MS);
      }
    }
    // No longer blocked by the time this was read: the client may try again at once.
    return Math.max(1, Math.ceil((until - now) / 1000));
  }
}
