// A share link seen by whoever holds its URL (docs/api.md, "Share links"): the share behind a token,
// whether it serves, and its downloads. The token has 256 bits of randomness and is kept only as a
// SHA-256 hash, so the URL is shown once, when the share is made. A download is counted, and recorded in
// the access log, the audit log and a share.downloaded webhook event, by one conditional UPDATE and its
// transaction, so two downloads at once cannot both take the last one. A right password or a download
// of a link with a download limit grants the browser a cookie for an hour (also kept as a hash), so
// that a resumed download needs no password in a URL; on a link with a download limit the client
// address is kept for the hour too, so that ranges continuing that download count nothing while anyone
// else's count. The password attempts themselves are passwords.ts.
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../../clock.js';
import type { Database, LocationRow, ShareRow } from '../../db/schema.js';
import { notFound } from '../../errors.js';
import { newId } from '../../ids.js';
import { emit } from '../../queue/outbox.js';
import { record } from '../audit/audit.js';
import { shareView } from './view.js';

/** What a counted download answers, for its access log row and audit event. */
export interface Served {
  /** 200, or 206 for a range. */
  status: number;
  userAgent: string | undefined;
}

/** Why a link serves nothing, or 'open'. */
export type LinkState = 'open' | 'unknown' | 'expired' | 'used_up';

/**
 * How long the link's cookie lets a browser download without the password again, and resume ranges
 * of a download it began without counting another.
 */
export const GRANT_MS = 3_600_000;
/** How long a client may resume a download of a link with a download limit without counting again. */
export const RESUME_MS = GRANT_MS;

/** The hash a link's token, or a grant's cookie, is kept as. */
export const tokenHash = (value: string) => createHash('sha256').update(value).digest('hex');
/** A new link token or grant cookie: 256 bits of randomness. */
export const newToken = () => randomBytes(32).toString('base64url');

export class ShareLinks {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  /** The share behind a link's token, and whether it serves. */
  async byToken(token: string): Promise<{ row: ShareRow | undefined; state: LinkState }> {
    const row = await this.db
      .selectFrom('shares')
      .selectAll()
      .where('token_hash', '=', tokenHash(token))
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
    const location = await this.db
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
    const counted = await this.db.transaction().execute(async (trx) => {
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
      await this.db.insertInto('share_downloads').values({ share_id: row.id, client, at: now }).execute();
      await this.db
        .deleteFrom('share_downloads')
        .where('share_id', '=', row.id)
        .where('at', '<=', now - RESUME_MS)
        .execute();
    }
    return accessId;
  }

  /** The end of a counted download's answer: the bytes written and whether it was whole. */
  async endDownload(accessId: string, bytes: number, completed: boolean): Promise<void> {
    await this.db
      .updateTable('share_accesses')
      .set({ bytes, completed: completed ? 1 : 0, ended_at: this.clock.now() })
      .where('id', '=', accessId)
      .execute();
  }

  /**
   * Whether a range that does not start at byte 0 continues a download this client began within
   * RESUME_MS (docs/api.md, "Share links"): it holds the link's cookie (a grant), or it comes from the
   * address a download was counted for.
   */
  async continuesDownload(row: ShareRow, cookie: string | undefined, client: string): Promise<boolean> {
    if (await this.hasGrant(row, cookie)) return true;
    const found = await this.db
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
    await this.db
      .updateTable('shares')
      .set((eb) => ({ downloads: eb('downloads', '-', 1) }))
      .where('id', '=', row.id)
      .where('downloads', '>', 0)
      .execute();
  }

  /**
   * A cookie value that lets this browser download for GRANT_MS without the password, and resume a
   * download it began without counting another.
   */
  async grant(row: ShareRow): Promise<string> {
    const token = newToken();
    const now = this.clock.now();
    await this.db
      .insertInto('share_grants')
      .values({ token_hash: tokenHash(token), share_id: row.id, expires_at: now + GRANT_MS })
      .execute();
    await this.db.deleteFrom('share_grants').where('expires_at', '<=', now).execute();
    return token;
  }

  async hasGrant(row: ShareRow, cookie: string | undefined): Promise<boolean> {
    if (!cookie) return false;
    const found = await this.db
      .selectFrom('share_grants')
      .select('share_id')
      .where('token_hash', '=', tokenHash(cookie))
      .where('share_id', '=', row.id)
      .where('expires_at', '>', this.clock.now())
      .executeTakeFirst();
    return found !== undefined;
  }
}
