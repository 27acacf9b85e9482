// Share links (docs/api.md, "Share links"): one file of a location behind a URL that ferry serves. The
// token has 256 bits of randomness and is kept only as a SHA-256 hash, so the URL is shown once, when
// the share is made. A password is kept as an argon2id hash; a correct one grants the browser a cookie
// for an hour (also kept as a hash), so that a resumed download needs no password in a URL; a download
// of a link with a download limit grants the same, and its client address is kept for the hour too, so
// that ranges continuing that download count nothing while anyone else's count. Password
// attempts are counted in the database, per link and client address and per link, and the count and
// the record are one step, so the limit is exact across processes.

import { createHash, randomBytes } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';
import { type Kysely, sql } from 'kysely';
import { PASSWORD_MAX } from '../../api/input.js';
import type { CreatedShare, Share, ShareDownload } from '../../api/shares.js';
import { type Clock, parseRfc3339, toRfc3339 } from '../../clock.js';
import type { Db } from '../../db/database.js';
import { afterCursor, encodeCursor, newestFirst, type Page, pageOf } from '../../db/paging.js';
import type { Database, LocationRow, ShareRow } from '../../db/schema.js';
import { workspaceRow } from '../../db/workspace-row.js';
import { invalid, notFound } from '../../errors.js';
import { isUuid, newId } from '../../ids.js';
import { expandSources, isPattern } from '../../objects/patterns.js';
import { type Queryable, rowsChanged } from '../../queue/moves.js';
import { emit } from '../../queue/outbox.js';
import type { ShareState } from '../../states.js';
import type { Entry } from '../../stores/contract.js';
import { type AuditContext, record } from '../audit/audit.js';
import { atLocation, type Caller } from '../caller.js';
import { checkCap } from '../caps.js';
import type { Storage } from '../storage.js';
import type { Operations } from '../transfers/operations.js';

export interface CreateShare {
  file: string;
  /** `file` is exact bytes, never a pattern (docs/api.md, "Exact names"). */
  literal?: boolean;
  password?: string;
  expires_at?: string;
  max_downloads?: number;
}

export type { CreatedShare };
/** A share link as the API shows it. */
export type ShareView = Share;

/** What a counted download answers, for its access log row and audit event. */
export interface Served {
  /** 200, or 206 for a range. */
  status: number;
  userAgent: string | undefined;
}

/** Why a link serves nothing, or 'open'. */
export type LinkState = 'open' | 'unknown' | 'expired' | 'used_up';

/** What a password attempt comes to: 429 with the seconds to wait when no guess is left. */
export type PasswordAnswer = 'right' | 'wrong' | { retryAfterSeconds: number };

/**
 * The cap on open links per workspace, and the password guesses allowed in any rolling minute
 * (docs/api.md, "Share links" and "Rate limits and caps"): per client address; per link for addresses
 * that guessed wrong; and per link for everyone.
 */
export interface ShareSettings {
  openShares: number;
  guesses: { perAddress: number; perLink: number; perLinkMax: number };
}
const GUESS_WINDOW_MS = 60_000;
/**
 * How long the link's cookie lets a browser download without the password again, and resume ranges
 * of a download it began without counting another.
 */
export const GRANT_MS = 3_600_000;
/** How long a client may resume a download of a link with a download limit without counting again. */
export const RESUME_MS = GRANT_MS;
/** Matches counted at most when a pattern names more than one file. */
const COUNT_MAX = 100_000;

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
const newToken = () => randomBytes(32).toString('base64url');

/** Revoked before expired before used up: the first reason a link serves nothing is the one shown. */
export function shareState(row: ShareRow, now: number): ShareState {
  if (row.revoked_at !== null) return 'revoked';
  if (row.expires_at !== null && row.expires_at <= now) return 'expired';
  if (row.max_downloads !== null && row.downloads >= row.max_downloads) return 'used_up';
  return 'active';
}

export function shareView(row: ShareRow, now: number): ShareView {
  const v: ShareView = {
    id: row.id,
    source: row.source,
    state: shareState(row, now),
    created_at: toRfc3339(row.created_at),
    has_password: row.password_hash !== null,
    downloads: row.downloads,
  };
  if (row.expires_at !== null) v.expires_at = toRfc3339(row.expires_at);
  if (row.revoked_at !== null) v.revoked_at = toRfc3339(row.revoked_at);
  if (row.max_downloads !== null) v.max_downloads = row.max_downloads;
  if (row.last_download_at !== null) v.last_download_at = toRfc3339(row.last_download_at);
  return v;
}

export class Shares {
  constructor(
    private readonly db: Db,
    private readonly operations: Operations,
    private readonly storage: Storage,
    private readonly clock: Clock,
    /** Where links point: read at each share, since `ferry serve` learns its port only once bound. */
    private readonly publicUrl: () => string,
    private readonly settings: ShareSettings,
  ) {}

  /**
   * The one file `file` names (`<location>/<path>`, a pattern allowed): 404 when nothing matches, 400
   * saying how many when several do. Share and send both take their file this way.
   */
  async resolveFile(
    caller: Caller,
    file: string,
    field: string,
    literal = false,
  ): Promise<{ row: LocationRow; entry: Entry }> {
    const { row, path } = await this.operations.resolveSource(caller, file, field, literal);
    const found = await this.storage.use(row, async (store) => {
      const matches: Entry[] = [];
      let count = 0;
      for await (const entry of expandSources(store, path, undefined, literal)) {
        if (matches.length < 1) matches.push(entry);
        if (++count > COUNT_MAX) break;
        if (!isPattern(path, literal)) break;
      }
      return { first: matches[0], count };
    });
    if (!found.first || found.count === 0) throw notFound(`${field}: no file matches "${file}"`);
    if (found.count > 1) {
      const many = found.count > COUNT_MAX ? `more than ${COUNT_MAX}` : String(found.count);
      throw invalid(`${field}: the pattern matches ${many} files; it must match exactly one`);
    }
    return { row, entry: found.first };
  }

  async create(caller: Caller, input: CreateShare, audit: AuditContext): Promise<CreatedShare> {
    const { workspaceId } = caller;
    const now = this.clock.now();
    const expiresAt = input.expires_at === undefined ? null : parseRfc3339(input.expires_at, 'expires_at');
    if (expiresAt !== null && expiresAt <= now) throw invalid('expires_at must be in the future');
    if (input.password !== undefined && (input.password === '' || input.password.length > PASSWORD_MAX)) {
      throw invalid(`password must be 1 to ${PASSWORD_MAX} characters`);
    }
    const { row, entry } = await this.resolveFile(caller, input.file, 'file', input.literal === true);
    return this.insert(workspaceId, row, entry.path, {
      capped: true,
      audit,
      expiresAt,
      ...(input.password === undefined ? {} : { password: input.password }),
      ...(input.max_downloads === undefined ? {} : { maxDownloads: input.max_downloads }),
    });
  }

  /** Stores a share of `path` in `location` and answers its URL (the only time the token is seen). */
  async insert(
    workspaceId: string,
    location: LocationRow,
    path: string,
    options: {
      expiresAt: number | null;
      password?: string;
      passwordHash?: string;
      maxDownloads?: number;
      /** Refuse with 409 when the workspace holds its cap of open links (POST /share). */
      capped?: boolean;
      /** The request's (POST /share), recorded with the share; a send's share records nothing. */
      audit?: AuditContext;
    },
  ): Promise<CreatedShare> {
    const token = newToken();
    const row: ShareRow = {
      id: newId(),
      workspace_id: workspaceId,
      location_id: location.id,
      path,
      source: `${location.label}/${path}`,
      token_hash: sha256(token),
      password_hash:
        options.passwordHash ?? (options.password === undefined ? null : await hash(options.password)),
      expires_at: options.expiresAt,
      max_downloads: options.maxDownloads ?? null,
      downloads: 0,
      last_download_at: null,
      revoked_at: null,
      created_at: this.clock.now(),
    };
    const { audit } = options;
    await this.db.kysely.transaction().execute(async (trx) => {
      if (options.capped)
        await checkCap(trx, 'shares', workspaceId, this.settings.openShares, row.created_at);
      await trx.insertInto('shares').values(row).execute();
      if (audit)
        await record(trx, audit, { action: 'share.create', target: row.id, status: 201 }, row.created_at);
    });
    const created: CreatedShare = { id: row.id, url: `${this.publicUrl()}/s/${token}` };
    if (row.expires_at !== null) created.expires_at = toRfc3339(row.expires_at);
    return created;
  }

  async list(caller: Caller, limit: number, cursor?: string): Promise<Page<ShareView>> {
    const now = this.clock.now();
    const page = await newestFirst(
      this.db.kysely,
      'shares',
      caller.workspaceId,
      limit,
      cursor,
      atLocation(caller),
    );
    return {
      items: page.rows.map((row) => shareView(row, now)),
      ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}),
    };
  }

  /** Revokes at once; revoking again changes nothing. Another workspace's share is not found. */
  async revoke(caller: Caller, id: string, audit: AuditContext): Promise<void> {
    if (!isUuid(id)) throw notFound(`share ${id} not found`);
    const now = this.clock.now();
    await this.db.kysely.transaction().execute(async (trx) => {
      const found = await trx
        .updateTable('shares')
        .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.val(now)) }))
        .where('id', '=', id)
        .where('workspace_id', '=', caller.workspaceId)
        .where(atLocation(caller))
        .executeTakeFirst();
      if (found.numUpdatedRows === 0n) throw notFound(`share ${id} not found`);
      await record(trx, audit, { action: 'share.revoke', target: id, status: 204 }, now);
    });
  }

  /** A send's share whose mail did not go out: nobody has its link, so it is revoked at once. */
  async revokeUnsent(id: string): Promise<void> {
    await this.db.kysely
      .updateTable('shares')
      .set({ revoked_at: this.clock.now() })
      .where('id', '=', id)
      .execute();
  }

  /** The share behind a link's token, and whether it serves. */
  async byToken(token: string): Promise<{ row: ShareRow | undefined; state: LinkState }> {
    const row = await this.db.kysely
      .selectFrom('shares')
      .selectAll()
      .where('token_hash', '=', sha256(token))
      .executeTakeFirst();
    return { row, state: row ? this.state(row) : 'unknown' };
  }

  state(row: ShareRow): LinkState {
    if (row.revoked_at !== null) return 'unknown';
    if (row.expires_at !== null && row.expires_at <= this.clock.now()) return 'expired';
    if (row.max_downloads !== null && row.downloads >= row.max_downloads) return 'used_up';
    return 'open';
  }

  /** The location a share reads from (deleting a location deletes its shares). */
  async location(row: ShareRow): Promise<LocationRow> {
    const location = await this.db.kysely
      .selectFrom('locations')
      .selectAll()
      .where('id', '=', row.location_id)
      .executeTakeFirst();
    if (!location) throw notFound('the shared file is gone');
    return location;
  }

  /**
   * Counts one download for `client`, unless the link was used up or revoked a moment ago (then
   * false): the check and the count are one conditional UPDATE, so two downloads at once cannot both
   * take the last one. On a link with a download limit the client address is kept for RESUME_MS, so
   * that its ranges continue this download (continuesDownload).
   */
  async countDownload(row: ShareRow, client: string, served?: Served): Promise<string | false> {
    const now = this.clock.now();
    const accessId = newId();
    // The count, its share.downloaded webhook event (docs/webhooks.md), its row of the access log and
    // its share.download audit event (docs/api.md, "Audit log") in one transaction.
    const counted = await this.db.kysely.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('shares')
        .set((eb) => ({ downloads: eb('downloads', '+', 1), last_download_at: now }))
        .where('id', '=', row.id)
        .where('revoked_at', 'is', null)
        .where((eb) =>
          eb.or([eb('max_downloads', 'is', null), eb('downloads', '<', eb.ref('max_downloads'))]),
        )
        .returningAll()
        .executeTakeFirst();
      if (updated) {
        await emit(trx, {
          workspaceId: updated.workspace_id,
          type: 'share.downloaded',
          data: shareView(updated, now),
          at: now,
        });
        const status = served?.status ?? 200;
        await trx
          .insertInto('share_accesses')
          .values({ id: accessId, share_id: row.id, at: now, ip: client, status, ended_at: null })
          .execute();
        await record(
          trx,
          { workspaceId: updated.workspace_id, keyId: null, ip: client, userAgent: served?.userAgent },
          { action: 'share.download', target: row.id, status },
          now,
        );
      }
      return updated !== undefined;
    });
    if (!counted) return false;
    if (row.max_downloads !== null) {
      await this.db.kysely
        .insertInto('share_downloads')
        .values({ share_id: row.id, client, at: now })
        .execute();
      await this.db.kysely
        .deleteFrom('share_downloads')
        .where('share_id', '=', row.id)
        .where('at', '<=', now - RESUME_MS)
        .execute();
    }
    return accessId;
  }

  /** The end of a counted download's answer: the bytes written and whether it was whole. */
  async endDownload(accessId: string, bytes: number, completed: boolean): Promise<void> {
    await this.db.kysely
      .updateTable('share_accesses')
      .set({ bytes, completed: completed ? 1 : 0, ended_at: this.clock.now() })
      .where('id', '=', accessId)
      .execute();
  }

  /**
   * A share's counted downloads, newest first (docs/api.md, "Share links": the access log); another
   * workspace's share is not found.
   */
  async downloads(
    caller: Caller,
    id: string,
    limit: number,
    cursor: string | undefined,
  ): Promise<Page<ShareDownload>> {
    const share = await workspaceRow(this.db.kysely, 'shares', caller.workspaceId, id, atLocation(caller));
    if (!share) throw notFound(`share ${id} not found`);
    const rows = await this.db.kysely
      .selectFrom('share_accesses')
      .selectAll()
      .where('share_id', '=', id)
      .where(afterCursor(cursor, { time: 'at', id: 'id', ties: 'desc' }))
      .orderBy('at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
    const page = pageOf(rows, limit, (last) => encodeCursor(Number(last.at), last.id));
    return {
      items: page.rows.map((r) => ({
        at: toRfc3339(Number(r.at)),
        ip: r.ip,
        status: Number(r.status),
        bytes: Number(r.bytes),
        completed: Number(r.completed) === 1,
        ...(r.ended_at === null ? {} : { ended_at: toRfc3339(Number(r.ended_at)) }),
      })),
      ...(page.next_cursor === undefined ? {} : { next_cursor: page.next_cursor }),
    };
  }

  /**
   * Whether a range that does not start at byte 0 continues a download this client began within
   * RESUME_MS (docs/api.md, "Share links"): it holds the link's cookie (a grant), or it comes from the
   * address a download was counted for.
   */
  async continuesDownload(row: ShareRow, cookie: string | undefined, client: string): Promise<boolean> {
    if (await this.hasGrant(row, cookie)) return true;
    const found = await this.db.kysely
      .selectFrom('share_downloads')
      .select('share_id')
      .where('share_id', '=', row.id)
      .where('client', '=', client)
      .where('at', '>', this.clock.now() - RESUME_MS)
      .executeTakeFirst();
    return found !== undefined;
  }

  /** Takes back a download counted for an answer that failed before it started. */
  async giveBackDownload(row: ShareRow): Promise<void> {
    await this.db.kysely
      .updateTable('shares')
      .set((eb) => ({ downloads: eb('downloads', '-', 1) }))
      .where('id', '=', row.id)
      .where('downloads', '>', 0)
      .execute();
  }

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
    const { perAddress, perLink, perLinkMax } = this.settings.guesses;
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
    const { perAddress, perLink, perLinkMax } = this.settings.guesses;
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

  /**
   * A cookie value that lets this browser download for GRANT_MS without the password, and resume a
   * download it began without counting another.
   */
  async grant(row: ShareRow): Promise<string> {
    const token = newToken();
    const now = this.clock.now();
    await this.db.kysely
      .insertInto('share_grants')
      .values({ token_hash: sha256(token), share_id: row.id, expires_at: now + GRANT_MS })
      .execute();
    await this.db.kysely.deleteFrom('share_grants').where('expires_at', '<=', now).execute();
    return token;
  }

  async hasGrant(row: ShareRow, cookie: string | undefined): Promise<boolean> {
    if (!cookie) return false;
    const found = await this.db.kysely
      .selectFrom('share_grants')
      .select('share_id')
      .where('token_hash', '=', sha256(cookie))
      .where('share_id', '=', row.id)
      .where('expires_at', '>', this.clock.now())
      .executeTakeFirst();
    return found !== undefined;
  }
}

/**
 * Share links revoked before `cutoff`, with their grants, guesses and download records first. Only
 * revoked links go: a revoked link answers 404 like one that never existed, so its page does not
 * change, while an expired or used-up link must keep answering 410 (docs/api.md, "Share links").
 */
export async function pruneRevoked(q: Queryable, cutoff: number, limit: number): Promise<number> {
  const picked = await q
    .selectFrom('shares')
    .select('id')
    .where('revoked_at', '<', cutoff)
    .orderBy('revoked_at')
    .limit(limit)
    .execute();
  const ids = picked.map((row) => row.id);
  if (ids.length === 0) return 0;
  await q.deleteFrom('share_grants').where('share_id', 'in', ids).execute();
  await q.deleteFrom('share_guesses').where('share_id', 'in', ids).execute();
  await q.deleteFrom('share_downloads').where('share_id', 'in', ids).execute();
  await q.deleteFrom('share_accesses').where('share_id', 'in', ids).execute();
  const result = await q
    .deleteFrom('shares')
    .where('id', 'in', ids)
    .where('revoked_at', '<', cutoff)
    .executeTakeFirst();
  return rowsChanged(result);
}
