// Share links (docs/api.md, "Share links") as their owner sees them: one file of a location behind a
// URL that ferry serves, made (POST /v1/share, or by a send; a password kept as an argon2id hash),
// listed, revoked, its access log read, and pruned once revoked. The file is named as a copy's source
// is, a pattern allowed, and must match exactly one file. What a link's visitor does (the token behind
// its URL, its downloads, its grants) is links.ts; password attempts are passwords.ts; the view the API
// shows is view.ts.
import { hash } from '@node-rs/argon2';
import { PASSWORD_MAX } from '../../api/input.js';
import type { CreatedShare, ShareDownload } from '../../api/shares.js';
import { type Clock, parseRfc3339, toRfc3339 } from '../../clock.js';
import type { Db } from '../../db/database.js';
import { afterCursor, encodeCursor, newestFirst, type Page, pageOf } from '../../db/paging.js';
import type { LocationRow, ShareRow } from '../../db/schema.js';
import { workspaceRow } from '../../db/workspace-row.js';
import { invalid, notFound } from '../../errors.js';
import { isUuid, newId } from '../../ids.js';
import { expandSources, isPattern } from '../../objects/patterns.js';
import { type Queryable, rowsChanged } from '../../queue/moves.js';
import type { Entry } from '../../stores/contract.js';
import { type AuditContext, record } from '../audit/audit.js';
import { atLocation, type Caller } from '../caller.js';
import { checkCap } from '../caps.js';
import type { Storage } from '../storage.js';
import type { Operations } from '../transfers/operations.js';
import { newToken, tokenHash } from './links.js';
import { type ShareView, shareView } from './view.js';

export interface CreateShare {
  file: string;
  /** `file` is exact bytes, never a pattern (docs/api.md, "Exact names"). */
  literal?: boolean;
  password?: string;
  expires_at?: string;
  max_downloads?: number;
}

export type { CreatedShare };

/** Matches counted at most when a pattern names more than one file. */
const COUNT_MAX = 100_000;

export class Shares {
  constructor(
    private readonly db: Db,
    private readonly operations: Operations,
    private readonly storage: Storage,
    private readonly clock: Clock,
    /** Where links point: read at each share, since `ferry serve` learns its port only once bound. */
    private readonly publicUrl: () => string,
    /** The cap on open links per workspace (docs/api.md, "Rate limits and caps"). */
    private readonly openShares: number,
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
      token_hash: tokenHash(token),
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
      if (options.capped) await checkCap(trx, 'shares', workspaceId, this.openShares, row.created_at);
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
