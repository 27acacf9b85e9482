// Locations: stored credentials for a storage backend (docs/api.md, "Locations"). Secrets are sealed
// before they reach the database and opened only to build a store; no projection carries them.

import type { Kysely, Transaction } from 'kysely';
import { LABEL_MAX_LENGTH } from '../../api/text.js';
import { type Clock, toRfc3339 } from '../../clock.js';
import type { Keyring } from '../../crypto/envelope.js';
import type { Database, LocationRow } from '../../db/schema.js';
import { locationSecret } from '../../durable/records.js';
import { invalid } from '../../errors.js';
import { newId } from '../../ids.js';
import * as health from '../../lifecycle/location-health.js';
import {
  isOAuthProvider,
  type OAuthSecret,
  type Provider,
  type ProviderSecret,
  type RotationClass,
  rotationClass,
} from '../../providers.js';
import { Secret } from '../../secret.js';
import type { LocationStatus } from '../../states.js';
import type { StoreLocation } from '../../stores/context.js';
import { type AuditContext, type AuditEntry, record } from '../audit/audit.js';
import { type Caller, mayAddress } from '../caller.js';
import { checkCap } from '../caps.js';
import { type LocationRef, resolveLocation } from './addressing.js';
import { checkMetadata, type Metadata, parseMetadata, serializeMetadata } from './metadata.js';
import { checkSecret } from './secret-shape.js';

export type { LocationStatus };

/** The projection: what create, get, replace secret and update label answer. */
export interface LocationProjection {
  id: string;
  provider: Provider;
  label: string;
  metadata?: Metadata;
}

/** The summary: an item of the locations list. */
export interface LocationSummary {
  id: string;
  provider: Provider;
  label: string;
  status: LocationStatus;
  validation_error?: string;
  created_at: string;
}

/** The status (docs/api.md, "Operations" and "Location health"). */
export interface LocationStatusView {
  status: LocationStatus;
  rotation_class?: RotationClass;
  access_token_expires_at?: string;
  refresh_requested: boolean;
  consecutive_refresh_failures: number;
  last_refresh_attempt_at?: string;
  failure_reason?: string;
  last_refresh_error?: string;
}

function checkLabel(label: string): string {
  if (label.trim() === '') throw invalid('label must not be empty');
  if (label.length > LABEL_MAX_LENGTH) throw invalid(`label must be at most ${LABEL_MAX_LENGTH} characters`);
  return label;
}

export function projection(row: LocationRow): LocationProjection {
  const p: LocationProjection = { id: row.id, provider: row.provider, label: row.label };
  if (row.metadata !== null) p.metadata = parseMetadata(row);
  return p;
}

export function summary(
  row: Pick<LocationRow, 'id' | 'provider' | 'label' | 'status' | 'validation_error' | 'created_at'>,
): LocationSummary {
  const s: LocationSummary = {
    id: row.id,
    provider: row.provider,
    label: row.label,
    status: row.status,
    created_at: toRfc3339(row.created_at),
  };
  if (row.validation_error !== null && row.status !== 'active') s.validation_error = row.validation_error;
  return s;
}

export function statusView(row: LocationRow): LocationStatusView {
  const provider = row.provider;
  const v: LocationStatusView = {
    status: row.status,
    refresh_requested: row.refresh_requested === 1,
    consecutive_refresh_failures: row.consecutive_refresh_failures,
  };
  const rotation = rotationClass(provider);
  if (rotation) v.rotation_class = rotation;
  if (row.access_token_expires_at !== null)
    v.access_token_expires_at = toRfc3339(row.access_token_expires_at);
  if (row.last_refresh_attempt_at !== null)
    v.last_refresh_attempt_at = toRfc3339(row.last_refresh_attempt_at);
  if (row.failure_reason !== null && row.status !== 'active') v.failure_reason = row.failure_reason;
  if (row.last_refresh_error !== null) v.last_refresh_error = row.last_refresh_error;
  return v;
}

/** When the access token in an OAuth secret expires; null for static credentials. */
function tokenExpiry(provider: Provider, secret: ProviderSecret): number | null {
  return isOAuthProvider(provider) ? Date.parse((secret as OAuthSecret).expiry) : null;
}

export interface CreateLocation {
  provider: Provider;
  label: string;
  secret: unknown;
  metadata?: Metadata;
}

/** Lists longer than this are read from the database every time rather than held in memory. */
const LIST_CACHE_MAX_ITEMS = 1000;
const LIST_CACHE_MAX_WORKSPACES = 1000;

export class Locations {
  /**
   * The last list read per workspace, with the workspace's locations_version it was read at. Database
   * triggers bump that version on every change to a location, by any process, and authentication
   * hands each request the version as of its arrival (docs/engine.md, "Authentication cache"), so a
   * cached list is served only while it is still exact.
   */
  readonly #lists = new Map<string, { version: number; items: LocationSummary[] }>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly keyring: Keyring,
    private readonly clock: Clock,
    /**
     * Told after each write here, so this process reads the new locations_version at once (the
     * others hear it from the database's triggers: src/domain/auth-cache.ts).
     */
    private readonly locationsWritten: (workspaceId: string) => void = () => {},
    /** The most locations a workspace may hold (docs/api.md, "Rate limits and caps"). */
    private readonly cap = Number.POSITIVE_INFINITY,
  ) {}

  async #reported(workspaceId: string, write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } finally {
      this.locationsWritten(workspaceId);
    }
  }

  /** A change and its audit record (last), in one transaction. */
  #recorded(
    workspaceId: string,
    audit: AuditContext,
    entry: AuditEntry,
    now: number,
    change: (trx: Transaction<Database>) => Promise<unknown>,
  ): Promise<void> {
    return this.#reported(workspaceId, () =>
      this.db.transaction().execute(async (trx) => {
        await change(trx);
        await record(trx, audit, entry, now);
      }),
    );
  }

  resolve(caller: Caller, ref: LocationRef): Promise<LocationRow> {
    return resolveLocation(this.db, caller, ref);
  }

  async create(workspaceId: string, input: CreateLocation, audit: AuditContext): Promise<LocationProjection> {
    const label = checkLabel(input.label);
    const metadata = input.metadata === undefined ? undefined : checkMetadata(input.provider, input.metadata);
    const secret = checkSecret(input.provider, input.secret);
    const id = newId();
    const now = this.clock.now();
    const row: LocationRow = {
      id,
      workspace_id: workspaceId,
      provider: input.provider,
      label,
      metadata: serializeMetadata(metadata),
      secret_envelope: this.keyring.seal(locationSecret.encode(secret), id),
      ...health.newHealth(),
      access_token_expires_at: tokenExpiry(input.provider, secret),
      secret_version: 1,
      created_at: now,
      updated_at: now,
    };
    await this.#recorded(
      workspaceId,
      audit,
      { action: 'location.create', target: id, status: 201 },
      now,
      async (trx) => {
        await checkCap(trx, 'locations', workspaceId, this.cap, now);
        await trx.insertInto('locations').values(row).execute();
      },
    );
    return projection(row);
  }

  /**
   * The locations list, oldest first. `version` is the workspace's locations_version read before this call
   * (the principal carries it); with it, an unchanged list is answered from memory.
   */
  list(caller: Caller, version?: number): Promise<LocationSummary[]> {
    // An unlimited key's list is the workspace's, as it was: no further step on the hot path.
    const all = this.#list(caller.workspaceId, version);
    if (caller.locations === null) return all;
    return all.then((items) => items.filter((item) => mayAddress(caller, item.id)));
  }

  async #list(workspaceId: string, version?: number): Promise<LocationSummary[]> {
    const cached = version === undefined ? undefined : this.#lists.get(workspaceId);
    if (cached && cached.version === version) return cached.items;
    const rows = await this.db
      .selectFrom('locations')
      .select(['id', 'provider', 'label', 'status', 'validation_error', 'created_at'])
      .where('workspace_id', '=', workspaceId)
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute();
    const items = rows.map(summary);
    if (version !== undefined && items.length <= LIST_CACHE_MAX_ITEMS) {
      // Rows read after the version are at least as new as it: storing them under it is safe.
      this.#lists.delete(workspaceId);
      this.#lists.set(workspaceId, { version, items });
      if (this.#lists.size > LIST_CACHE_MAX_WORKSPACES) {
        const oldest = this.#lists.keys().next().value;
        if (oldest !== undefined) this.#lists.delete(oldest);
      }
    }
    return items;
  }

  async get(caller: Caller, ref: LocationRef): Promise<LocationProjection> {
    return projection(await this.resolve(caller, ref));
  }

  /**
   * A new secret (and optionally metadata); a replaced secret makes the location active (docs/api.md,
   * "Location health") and takes the refresh lease away (health.replaceSecret).
   */
  async replaceSecret(
    caller: Caller,
    ref: LocationRef,
    input: { secret: unknown; metadata?: Metadata },
    audit: AuditContext,
  ): Promise<LocationProjection> {
    const row = await this.resolve(caller, ref);
    const provider = row.provider;
    const metadata = input.metadata === undefined ? undefined : checkMetadata(provider, input.metadata);
    const secret = checkSecret(provider, input.secret);
    const update = {
      secret_envelope: this.keyring.seal(locationSecret.encode(secret), row.id),
      metadata: metadata === undefined ? row.metadata : serializeMetadata(metadata),
      access_token_expires_at: tokenExpiry(provider, secret),
    };
    const now = this.clock.now();
    await this.#recorded(
      caller.workspaceId,
      audit,
      { action: 'location.replace', target: row.id, status: 200 },
      now,
      (trx) => health.replaceSecret(trx, row.id, update, now),
    );
    return projection({ ...row, ...update });
  }

  /** Only the label changes. */
  async updateLabel(
    caller: Caller,
    ref: LocationRef,
    label: string,
    audit: AuditContext,
  ): Promise<LocationProjection> {
    checkLabel(label);
    const row = await this.resolve(caller, ref);
    const updatedAt = this.clock.now();
    await this.#recorded(
      caller.workspaceId,
      audit,
      { action: 'location.rename', target: row.id, status: 200 },
      updatedAt,
      (trx) =>
        trx.updateTable('locations').set({ label, updated_at: updatedAt }).where('id', '=', row.id).execute(),
    );
    return projection({ ...row, label, updated_at: updatedAt });
  }

  /** Irreversible. */
  async delete(caller: Caller, ref: LocationRef, audit: AuditContext): Promise<void> {
    const row = await this.resolve(caller, ref);
    await this.#recorded(
      caller.workspaceId,
      audit,
      { action: 'location.delete', target: row.id, status: 204 },
      this.clock.now(),
      (trx) => trx.deleteFrom('locations').where('id', '=', row.id).execute(),
    );
  }

  /**
   * Queue a refresh for the refresher (docs/api.md, "Location health"). Static credentials do not
   * rotate: accepted, nothing changes.
   */
  async requestRefresh(caller: Caller, ref: LocationRef, audit: AuditContext): Promise<boolean> {
    const row = await this.resolve(caller, ref);
    const oauth = isOAuthProvider(row.provider);
    // Accepted either way (202), so recorded either way: with nothing else when nothing changes.
    await this.#recorded(
      caller.workspaceId,
      audit,
      { action: 'location.refresh', target: row.id, status: 202 },
      this.clock.now(),
      async (trx) => {
        if (oauth) await health.requestRefresh(trx, row.id);
      },
    );
    return oauth;
  }

  async status(caller: Caller, ref: LocationRef): Promise<LocationStatusView> {
    return statusView(await this.resolve(caller, ref));
  }

  /** The location as a store needs it, with the secret opened but still wrapped. */
  storeLocation(row: LocationRow): StoreLocation {
    const opened = this.keyring.open(row.secret_envelope, row.id);
    return {
      id: row.id,
      provider: row.provider,
      metadata: parseMetadata(row),
      secret: new Secret<ProviderSecret>(locationSecret.decode(opened.reveal(), row.id)),
    };
  }

  /**
   * A provider rejected the credentials for good (docs/api.md, "Errors", 409): the location becomes failed
   * with the provider's reason, until its secret is replaced.
   */
  markFailed(locationId: string, reason: string): Promise<void> {
    return health.markFailed(this.db, locationId, reason, this.clock.now());
  }
}
