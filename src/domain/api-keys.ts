// API keys (docs/api.md, "API keys" and "Authentication"). A key is a random bearer token shown once; only
// its SHA-256 is stored. Authentication reads the row, or the process's AuthCache, which forgets a key
// as soon as any process changes it (src/domain/auth-cache.ts), so revocation and expiry take effect
// on the very next request everywhere. last_used_at is written at most once a minute per key, by a
// conditional UPDATE that several processes can race on harmlessly.

import { hash, randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { type ApiKey, type CreatedApiKey, SCOPES, type Scope } from '../api/keys.js';
import { type Clock, toRfc3339 } from '../clock.js';
import type { ApiKeyRow, Database } from '../db/schema.js';
import { workspaceRow } from '../db/workspace-row.js';
import { keyLocations, keyScopes } from '../durable/records.js';
import { FerryError, invalid, notFound } from '../errors.js';
import { newId } from '../ids.js';
import { type AuditContext, type AuditEntry, record } from './audit/audit.js';
import type { AuthCache, CachedKey } from './auth-cache.js';
import { type Caller, mayAddress } from './caller.js';
import { checkCap } from './caps.js';

export const TOKEN_PREFIX = 'fry_';
const LAST_USED_RESOLUTION_MS = 60_000;

export type { CreatedApiKey };
/** An API key as the API shows it. */
export type ApiKeyView = ApiKey;

/** The key behind a request: a caller (its workspace and locations) with its key and scopes. */
export interface Principal extends Caller {
  keyId: string;
  /** The workspace's locations_version when the request was authenticated. */
  locationsVersion: number;
  /** What the key may do (docs/api.md, "Scopes"). */
  scopes: ReadonlySet<Scope>;
}

/** What a key may do and address, as stored (JSON arrays; null: every scope, every location). */
export interface KeyLimits {
  scopes: ReadonlySet<Scope>;
  locations: ReadonlySet<string> | null;
}

/** The operator's keys (bootstrap, `ferry keys create --workspace`) and every key before scopes. */
export const UNLIMITED: KeyLimits = { scopes: new Set(SCOPES), locations: null };

function limitsOf(row: { id: string; scopes: string | null; locations: string | null }): KeyLimits {
  const scopes =
    row.scopes === null
      ? UNLIMITED.scopes
      : new Set(keyScopes.decode(row.scopes, row.id).filter((s): s is Scope => SCOPES.includes(s as Scope)));
  const locations = row.locations === null ? null : new Set(keyLocations.decode(row.locations, row.id));
  return { scopes, locations };
}

/** Keys a caller may see and manage: a key limited to some locations, those limited within them. */
function manages(caller: Caller | undefined, limits: KeyLimits): boolean {
  if (caller === undefined || caller.locations === null) return true;
  return limits.locations !== null && [...limits.locations].every((id) => mayAddress(caller, id));
}

export function hashToken(token: string): string {
  // The one-shot hash (Node 20.12): a third of createHash's time, and it runs on every request.
  return hash('sha256', token, 'hex');
}

function generateToken(): string {
  return `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
}

function view(row: ApiKeyRow): ApiKeyView {
  const limits = limitsOf(row);
  const v: ApiKeyView = {
    id: row.id,
    name: row.name,
    created_at: toRfc3339(row.created_at),
    scopes: SCOPES.filter((scope) => limits.scopes.has(scope)),
  };
  if (limits.locations !== null) v.locations = [...limits.locations];
  if (row.expires_at !== null) v.expires_at = toRfc3339(row.expires_at);
  if (row.last_used_at !== null) v.last_used_at = toRfc3339(row.last_used_at);
  if (row.revoked_at !== null) v.revoked_at = toRfc3339(row.revoked_at);
  return v;
}

/**
 * The scopes and locations of a key made by `creator` (docs/api.md, "Scopes"): what was asked, which
 * must lie within the creator's own; when none are asked, the creator's. A location the creator may
 * not address does not exist for it (404, as anywhere else); the ids' existence is checked by create.
 */
function limitsFor(
  creator: KeyLimits,
  asked: { scopes?: readonly Scope[]; locations?: readonly string[] },
): KeyLimits {
  const scopes = asked.scopes === undefined ? creator.scopes : new Set(asked.scopes);
  const beyond = [...scopes].filter((scope) => !creator.scopes.has(scope));
  if (beyond.length > 0) {
    throw new FerryError(
      'forbidden',
      `a key can create keys only within its own scopes; this key lacks ${beyond.map((s) => `"${s}"`).join(', ')}`,
    );
  }
  if (asked.locations === undefined) return { scopes, locations: creator.locations };
  const outside = asked.locations.find((id) => creator.locations !== null && !creator.locations.has(id));
  if (outside !== undefined) throw notFound(`location ${outside} was not found`);
  return { scopes, locations: new Set(asked.locations) };
}

/**
 * A key that exists but was refused (revoked, expired): the error says to the caller only what any
 * refusal says; the key and its workspace go to the audit log (src/http/refused-auth.ts), so that the
 * workspace's admins see a revoked key still in use, and from where.
 */
export class RefusedKey extends FerryError {
  constructor(
    message: string,
    readonly keyId: string,
    readonly workspaceId: string,
  ) {
    super('unauthenticated', message);
  }
}

function checkName(name: string): string {
  if (name.trim() === '') throw invalid('name must not be empty');
  return name;
}

export class ApiKeys {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly cache?: AuthCache,
    /** The most keys (not revoked) a workspace may hold (docs/api.md, "Rate limits and caps"). */
    private readonly cap = Number.POSITIVE_INFINITY,
  ) {}

  /**
   * A new key of the workspace. `creator` is the limits of the key asking (a key creates keys only within
   * its own); the operator's door (bootstrap, `ferry keys create --workspace`) passes UNLIMITED.
   */
  async create(
    workspaceId: string,
    input: {
      name: string;
      expiresAt?: number;
      scopes?: readonly Scope[];
      locations?: readonly string[];
    },
    creator: KeyLimits = UNLIMITED,
    /** The request's; the operator's door and tests record nothing. */
    audit?: AuditContext,
  ): Promise<CreatedApiKey> {
    const now = this.clock.now();
    if (input.expiresAt !== undefined && input.expiresAt <= now) {
      throw invalid('expires_at must be in the future');
    }
    const limits = limitsFor(creator, input);
    const token = generateToken();
    const row: ApiKeyRow = {
      id: newId(),
      workspace_id: workspaceId,
      name: checkName(input.name),
      token_hash: hashToken(token),
      created_at: now,
      updated_at: now,
      expires_at: input.expiresAt ?? null,
      revoked_at: null,
      last_used_at: null,
      // No limit is stored as null: such a key gains any scope a later release adds, as keys before
      // scopes do.
      scopes:
        limits.scopes.size === SCOPES.length
          ? null
          : keyScopes.encode(SCOPES.filter((x) => limits.scopes.has(x))),
      locations: limits.locations === null ? null : keyLocations.encode([...limits.locations]),
    };
    await this.db.transaction().execute(async (trx) => {
      await checkCap(trx, 'api_keys', workspaceId, this.cap, now);
      if (input.locations !== undefined) {
        // In the key's transaction: a location deleted meanwhile is not named by a new key.
        const found = await trx
          .selectFrom('locations')
          .select('id')
          .where('workspace_id', '=', workspaceId)
          .where('id', 'in', input.locations)
          .execute();
        const known = new Set(found.map((r) => r.id));
        const missing = input.locations.find((id) => !known.has(id));
        if (missing !== undefined) throw notFound(`location ${missing} was not found`);
      }
      await trx.insertInto('api_keys').values(row).execute();
      if (audit) await record(trx, audit, { action: 'key.create', target: row.id, status: 201 }, now);
    });
    const { last_used_at: _unused, revoked_at: _none, ...shown } = view(row);
    return { ...shown, token };
  }

  /** The workspace's keys; for a key limited to some locations, those limited within its own. */
  async list(caller: Caller): Promise<ApiKeyView[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('workspace_id', '=', caller.workspaceId)
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute();
    return rows.filter((row) => manages(caller, limitsOf(row))).map(view);
  }

  /** One key of the workspace as the list shows it (GET /v1/key: the caller's own). */
  async get(caller: Caller, id: string): Promise<ApiKeyView> {
    return view(await this.find(caller, id));
  }

  /** A key the caller may see (the operator's door passes the workspace's caller). */
  private async find(caller: Caller, id: string): Promise<ApiKeyRow> {
    const row = await workspaceRow(this.db, 'api_keys', caller.workspaceId, id);
    if (!row || !manages(caller, limitsOf(row))) throw notFound(`API key ${id} was not found`);
    return row;
  }

  /** Rename and/or set the expiry; the token and its callers are unaffected. */
  async update(
    caller: Caller,
    id: string,
    input: { name?: string; expiresAt?: number },
    audit: AuditContext,
  ): Promise<void> {
    if (input.name === undefined && input.expiresAt === undefined) {
      throw invalid('send name or expires_at (or both)');
    }
    if (input.name !== undefined) checkName(input.name);
    const row = await this.find(caller, id);
    const now = this.clock.now();
    await this.#reported(row.id, { action: 'key.update', target: row.id, status: 204 }, audit, now, (trx) =>
      trx
        .updateTable('api_keys')
        .set({
          name: input.name ?? row.name,
          expires_at: input.expiresAt === undefined ? row.expires_at : input.expiresAt,
          updated_at: now,
        })
        .where('id', '=', row.id)
        .execute(),
    );
  }

  /** Immediate, no grace window; revoking twice is fine. */
  async revoke(caller: Caller, id: string, audit?: AuditContext): Promise<void> {
    const row = await this.find(caller, id);
    const now = this.clock.now();
    const entry: AuditEntry = { action: 'key.revoke', target: row.id, status: 204 };
    if (row.revoked_at !== null) {
      // Revoking again changes nothing but is answered 204 all the same: recorded alone.
      if (audit) await this.db.transaction().execute((trx) => record(trx, audit, entry, now));
      return;
    }
    await this.#reported(row.id, entry, audit, now, (trx) =>
      trx
        .updateTable('api_keys')
        .set({ revoked_at: now, updated_at: now })
        .where('id', '=', row.id)
        .execute(),
    );
  }

  /**
   * A write to a key and its audit record (last, when the request gave one), in one transaction: this
   * process's cache forgets the key at once, the others by the triggers' report.
   */
  async #reported(
    keyId: string,
    entry: AuditEntry | undefined,
    audit: AuditContext | undefined,
    now: number,
    write: (trx: Transaction<Database>) => Promise<unknown>,
  ): Promise<void> {
    try {
      await this.db.transaction().execute(async (trx) => {
        await write(trx);
        if (audit && entry) await record(trx, audit, entry, now);
      });
    } finally {
      this.cache?.forgetKey(keyId);
    }
  }

  /** The workspace and key behind a bearer token, or an unauthenticated error. */
  async authenticate(token: string): Promise<Principal> {
    const now = this.clock.now();
    if (!token.startsWith(TOKEN_PREFIX)) throw new FerryError('unauthenticated', 'the API key is not valid');
    return this.#authenticate(hashToken(token), now, undefined);
  }

  /**
   * For a request that changes nothing (src/http/auth.ts): the principal of a cached key at once,
   * unconfirmed, and `confirmed`, which is what authenticate() would answer for this request: it
   * waits for the barrier started now, falls back to the database if the key was forgotten meanwhile,
   * and only then writes last_used_at. Undefined when the key is not cached, has expired, or there is
   * nothing to overlap (SQLite); then authenticate() answers. The unconfirmed principal has no
   * locations_version: an answer built from it could be stale (reading it throws).
   */
  early(token: string): { principal: Principal; confirmed: Promise<Principal> } | undefined {
    if (!this.cache?.overlaps || !token.startsWith(TOKEN_PREFIX)) return undefined;
    const now = this.clock.now();
    const hash = hashToken(token);
    const early = this.cache.early(hash);
    if (!early) return undefined;
    const { key, barrier } = early;
    if (key.expiresAt !== null && key.expiresAt <= now) return undefined;
    const principal: Principal = {
      workspaceId: key.workspaceId,
      keyId: key.keyId,
      scopes: key.scopes,
      locations: key.locations,
      get locationsVersion(): number {
        throw new FerryError('internal', 'locations_version of an unconfirmed key (route needs authFirst)');
      },
    };
    return { principal, confirmed: this.#authenticate(hash, now, barrier) };
  }

  async #authenticate(hash: string, now: number, barrier: Promise<boolean> | undefined): Promise<Principal> {
    const hit = await this.cache?.lookup(hash, barrier);
    if (hit) {
      const { key, version } = hit;
      if (key.expiresAt !== null && key.expiresAt <= now) {
        throw new RefusedKey('the API key has expired', key.keyId, key.workspaceId);
      }
      await this.#touch(key, now);
      return principalOf(key, version);
    }
    const ticket = this.cache?.ticket();
    const row = await this.db
      .selectFrom('api_keys')
      .innerJoin('workspaces', 'workspaces.id', 'api_keys.workspace_id')
      .select([
        'api_keys.id',
        'api_keys.workspace_id',
        'api_keys.expires_at',
        'api_keys.revoked_at',
        'api_keys.last_used_at',
        'api_keys.scopes',
        'api_keys.locations',
        'workspaces.locations_version',
      ])
      .where('api_keys.token_hash', '=', hash)
      .executeTakeFirst();
    if (!row) throw new FerryError('unauthenticated', 'the API key is not valid');
    if (row.revoked_at !== null) {
      throw new RefusedKey('the API key has been revoked', row.id, row.workspace_id);
    }
    if (row.expires_at !== null && row.expires_at <= now) {
      throw new RefusedKey('the API key has expired', row.id, row.workspace_id);
    }
    const key: CachedKey = {
      keyId: row.id,
      workspaceId: row.workspace_id,
      expiresAt: row.expires_at,
      lastUsedAt: row.last_used_at,
      ...limitsOf(row),
    };
    await this.#touch(key, now);
    if (ticket !== undefined) this.cache?.put(ticket, hash, key, row.locations_version);
    return principalOf(key, row.locations_version);
  }

  async #touch(key: CachedKey, now: number): Promise<void> {
    if (key.lastUsedAt !== null && key.lastUsedAt > now - LAST_USED_RESOLUTION_MS) return;
    await this.db
      .updateTable('api_keys')
      .set({ last_used_at: now })
      .where('id', '=', key.keyId)
      .where((eb) =>
        eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', now - LAST_USED_RESOLUTION_MS)]),
      )
      .execute();
    key.lastUsedAt = now;
  }
}

function principalOf(key: CachedKey, locationsVersion: number): Principal {
  return {
    workspaceId: key.workspaceId,
    keyId: key.keyId,
    locationsVersion,
    scopes: key.scopes,
    locations: key.locations,
  };
}
