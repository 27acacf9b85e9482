import { type Clock, toRfc3339 } from '../../clock.js';
import type { Keyring } from '../../crypto/envelope.js';
import type { Db } from '../../db/database.js';
import type { LocationRow } from '../../db/schema.js';
import { oauthSecret } from '../../durable/records.js';
import * as health from '../../lifecycle/location-health.js';
import type { Logger } from '../../log.js';
import {
  isOAuthProvider,
  OAUTH_PROVIDERS,
  type OAuthProvider,
  type OAuthSecret,
  rotationClass,
} from '../../providers.js';
import { type BackoffPolicy, backoffMs } from '../../queue/backoff.js';
import { LOCATION_REFRESH } from '../../queue/leased.js';
import { leaseFree } from '../../queue/leases.js';
import { Secret } from '../../secret.js';
import type { LocationStatus } from '../../states.js';
import type { OAuthApp } from '../../stores/context.js';
import {
  RefreshFailure,
  type RefreshFailureClass,
  refreshTokens,
} from '../../stores/shared/token-endpoint.js';
import { parseMetadata } from '../locations/metadata.js';
import type { RefreshMetrics } from './metrics.js';

export interface RefreshSettings {
  /** Refresh a token that expires within this many ms. */
  aheadMs: number;
  /** Passing failures in a row before needs_attention. */
  maxFailures: number;
  /** How long a refresh lease lasts; the token request times out well within it. */
  leaseMs: number;
  /** The token request's bound, answer included (FERRY_OUTBOUND_ANSWER_SECONDS); at most half the lease. */
  tokenTimeoutMs?: number;
}

export interface RefreshDeps {
  db: Db;
  keyring: Keyring;
  clock: Clock;
  logger: Logger;
  metrics: RefreshMetrics;
  apps: Record<OAuthProvider, OAuthApp>;
  /** This process, as lease owner. */
  owner: string;
  settings: RefreshSettings;
  /** Jitter for backoff; tests pin it. */
  random?: () => number;
  /** Providers whose client settings were refused, logged once each per process. */
  clientErrorsLogged?: Set<string>;
}

/** Passing failures wait 15 s, doubling, at most 10 minutes (and never less than Retry-After). */
export const REFRESH_BACKOFF: BackoffPolicy = { baseMs: 15_000, capMs: 600_000 };

/**
 * Why this refresh is made, which decides whether it is still due once the lease is held:
 * - due: the refresher's scan (requested, or expiring within aheadMs);
 * - expiring: a store is about to send a token that expires within `marginMs`;
 * - rejected: a provider answered 401 to `token`; due unless the stored token is another one already.
 */
export type RefreshTrigger =
  | { kind: 'due' }
  | { kind: 'expiring'; marginMs: number }
  | { kind: 'rejected'; token: string };

export type RefreshResult =
  | { kind: 'refreshed'; token: Secret; expiresAt: number }
  | { kind: 'fresh'; token: Secret; expiresAt: number | null }
  | { kind: 'busy' }
  | { kind: 'gone' }
  | {
      kind: 'failed';
      failureClass: RefreshFailureClass | 'status';
      message: string;
      /** The location's status after this attempt. */
      status: LocationStatus;
      retryAfterSeconds?: number;
    }
  | { kind: 'lost' };

const TOKEN_TIMEOUT_MAX_MS = 30_000;

function openSecret(keyring: Keyring, row: LocationRow): OAuthSecret {
  return oauthSecret.decode(keyring.open(row.secret_envelope, row.id).reveal(), row.id);
}

function release(deps: RefreshDeps, id: string): Promise<void> {
  return health.release(deps.db.kysely, deps.owner, id);
}

function isDue(
  row: LocationRow,
  secret: OAuthSecret,
  trigger: RefreshTrigger,
  deps: RefreshDeps,
  now: number,
) {
  const expiresAt = row.access_token_expires_at;
  switch (trigger.kind) {
    case 'due':
      return row.refresh_requested === 1 || expiresAt === null || expiresAt <= now + deps.settings.aheadMs;
    case 'expiring':
      return expiresAt === null || expiresAt <= now + trigger.marginMs;
    case 'rejected':
      return secret.access_token === trigger.token;
  }
}

/** One refresh of location `id`, as `trigger` asks. Never throws for a provider's answer. */
export async function refreshLocation(
  deps: RefreshDeps,
  id: string,
  trigger: RefreshTrigger,
): Promise<RefreshResult> {
  const { clock } = deps;
  const now = clock.now();
  const row = await health.takeLease(deps.db.kysely, deps.db.dialect, id, {
    owner: deps.owner,
    now,
    until: now + deps.settings.leaseMs,
  });
  if (!row) {
    const exists = await deps.db.kysely
      .selectFrom('locations')
      .select('id')
      .where('id', '=', id)
      .executeTakeFirst();
    return exists ? { kind: 'busy' } : { kind: 'gone' };
  }
  const provider = row.provider;
  if (!isOAuthProvider(provider)) {
    await release(deps, id);
    return { kind: 'gone' };
  }
  let answered = false;
  try {
    return await refreshHeld(deps, row, provider, trigger, () => {
      answered = true;
    });
  } catch (err) {
    // A path that did not write its outcome (a bug, a database error) hands the lease back, unless the
    // provider answered: then a retry could only reuse a spent token, and the lease runs out instead.
    if (!answered) await release(deps, id).catch(() => {});
    throw err;
  }
}

/** The refresh itself, with the lease held. Every return has written its outcome and freed the lease. */
async function refreshHeld(
  deps: RefreshDeps,
  row: LocationRow,
  provider: OAuthProvider,
  trigger: RefreshTrigger,
  onAnswer: () => void,
): Promise<RefreshResult> {
  const { clock } = deps;
  const id = row.id;
  const secret = openSecret(deps.keyring, row);
  const now = clock.now();
  if (row.status === 'failed') return await refuseFailed(deps, row);
  // Waiting on a person: only a requested refresh tries again (docs/api.md, "Location health").
  if (row.status === 'needs_attention' && row.refresh_requested !== 1) {
    await release(deps, id);
    return { kind: 'failed', failureClass: 'status', message: attentionMessage(row), status: row.status };
  }
  // A store's refresh waits out the backoff of a passing failure like the refresher does (the
  // provider may have asked for it with Retry-After); the operation is retried later instead.
  if (trigger.kind !== 'due' && row.refresh_after > now && isDue(row, secret, trigger, deps, now)) {
    await release(deps, id);
    return {
      kind: 'failed',
      failureClass: 'passing',
      message: `waiting to retry after: ${row.last_refresh_error ?? 'a passing failure'}`,
      status: row.status,
      retryAfterSeconds: Math.ceil((row.refresh_after - now) / 1000),
    };
  }
  if (!isDue(row, secret, trigger, deps, now)) {
    await release(deps, id);
    return {
      kind: 'fresh',
      token: new Secret(secret.access_token),
      expiresAt: row.access_token_expires_at,
    };
  }
  const scope = scopeOf(row);
  let tokens: Awaited<ReturnType<typeof refreshTokens>>;
  try {
    tokens = await refreshTokens({
      provider,
      app: deps.apps[provider],
      refreshToken: new Secret(secret.refresh_token),
      ...(scope === undefined ? {} : { scope }),
      timeoutMs: Math.min(
        deps.settings.tokenTimeoutMs ?? TOKEN_TIMEOUT_MAX_MS,
        Math.floor(deps.settings.leaseMs / 2),
      ),
      now: () => clock.now(),
    });
  } catch (err) {
    onAnswer();
    if (!(err instanceof RefreshFailure)) throw err;
    return await recordFailure(deps, row, err);
  }
  onAnswer();
  // Nothing but the write between the provider's answer and the database: for a single-use token,
  // the old refresh token is spent from this moment on.
  const next: OAuthSecret = {
    access_token: tokens.accessToken.reveal(),
    refresh_token: tokens.refreshToken?.reveal() ?? secret.refresh_token,
    expiry: toRfc3339(tokens.expiresAt),
  };
  const written = await health.refreshed(
    deps.db.kysely,
    deps.owner,
    row,
    {
      secret_envelope: deps.keyring.seal(oauthSecret.encode(next), id),
      access_token_expires_at: tokens.expiresAt,
    },
    clock.now(),
  );
  deps.metrics.refreshed(provider, 'success');
  if (!written) {
    // The secret was replaced (which takes the lease) or the location deleted meanwhile.
    deps.logger.info(
      { location: id, provider },
      'refreshed token discarded: the secret was replaced meanwhile',
    );
    return { kind: 'lost' };
  }
  if (row.status !== 'active') {
    deps.logger.info(
      { location: id, provider, from: row.status, to: 'active' },
      'location active again after a refresh',
    );
  }
  deps.logger.debug({ location: id, provider, expires_at: next.expiry }, 'access token refreshed');
  return { kind: 'refreshed', token: tokens.accessToken, expiresAt: tokens.expiresAt };
}

/** Microsoft's scopes from metadata `scopes` (a string, or a list), space-separated. */
function scopeOf(row: LocationRow): string | undefined {
  if (row.provider !== 'onedrive' || row.metadata === null) return undefined;
  const scopes = parseMetadata(row).scopes;
  if (typeof scopes === 'string' && scopes.trim() !== '')
    return scopes
      .trim()
      .split(/[\s,]+/)
      .join(' ');
  if (Array.isArray(scopes) && scopes.every((s) => typeof s === 'string') && scopes.length > 0)
    return scopes.join(' ');
  return undefined;
}

function attentionMessage(row: LocationRow): string {
  return `location ${row.label} (${row.id}) needs attention: ${row.failure_reason ?? row.last_refresh_error ?? 'refresh failed'}; request a refresh (POST /v1/locations/refresh) or store a new secret (PUT /v1/locations)`;
}

/** A failed location is not refreshed: its grant is gone. A request for it is answered, not kept. */
async function refuseFailed(deps: RefreshDeps, row: LocationRow): Promise<RefreshResult> {
  const message = `not refreshed: the location is failed (${row.failure_reason ?? row.validation_error ?? 'credentials rejected'}); store a new secret (PUT /v1/locations)`;
  await health.refuseFailed(deps.db.kysely, deps.owner, row, message);
  return { kind: 'failed', failureClass: 'status', message, status: row.status };
}

function settingsNames(provider: OAuthProvider): string {
  const prefix = `FERRY_${provider.toUpperCase()}_CLIENT_`;
  return `${prefix}ID and ${prefix}SECRET`;
}

/** The failure's class decides the location's status; every field written at once, lease-checked. */
async function recordFailure(
  deps: RefreshDeps,
  row: LocationRow,
  failure: RefreshFailure,
): Promise<RefreshResult> {
  const provider = row.provider as OAuthProvider;
  const now = deps.clock.now();
  const failures = row.consecutive_refresh_failures + 1;
  const { failureClass } = failure;
  let error = failure.message;
  let move: health.RefreshFailed['move'] = row.status === 'active' ? 'backOff' : 'needsAttention';
  let reason: string | null = row.failure_reason;
  let refreshAfter = 0;
  switch (failureClass) {
    case 'terminal': {
      const spent =
        rotationClass(provider) === 'oauth-single-use'
          ? ` (a ${provider} refresh token is replaced at every refresh; one spent by a process that stopped before saving its answer is gone too)`
          : '';
      move = 'grantGone';
      reason = `${error}: the grant is gone${spent}; store a new secret (PUT /v1/locations)`;
      break;
    }
    case 'interaction':
      move = 'needsAttention';
      reason = `${error}: the account's owner must sign in again or approve access, then store a new secret or request a refresh`;
      break;
    case 'client': {
      move = 'needsAttention';
      error = `${error}: ferry's ${provider} application was refused; check ${settingsNames(provider)}`;
      reason = error;
      const logged = deps.clientErrorsLogged;
      if (!logged?.has(provider)) {
        logged?.add(provider);
        deps.logger.error(
          { provider, settings: settingsNames(provider), error: failure.message },
          `${provider} refused ferry's OAuth client settings: check ${settingsNames(provider)}`,
        );
      }
      break;
    }
    case 'passing':
      if (failures >= deps.settings.maxFailures) {
        move = 'needsAttention';
        reason = `${failures} refresh attempts in a row failed; the last: ${error}`;
      } else {
        refreshAfter = now + backoffMs(failures, failure, deps.random, REFRESH_BACKOFF);
      }
      break;
  }
  await health.refreshFailed(
    deps.db.kysely,
    deps.owner,
    row,
    { move, reason, error, failures, refreshAfter },
    now,
  );
  const status = health.LOCATION_MOVES[move].to[0];
  deps.metrics.refreshed(provider, failureClass);
  if (status !== row.status) {
    deps.logger.warn(
      { location: row.id, provider, from: row.status, to: status, failure_class: failureClass, reason },
      `location is now ${status}`,
    );
  } else {
    deps.logger.info(
      { location: row.id, provider, failure_class: failureClass, failures, error },
      'refresh failed',
    );
  }
  return {
    kind: 'failed',
    failureClass,
    message: status === row.status ? error : (reason ?? error),
    status,
    ...(failure.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: failure.retryAfterSeconds }),
  };
}

/** Ids of OAuth locations the refresher should look at now, requested ones first. */
export async function dueLocations(deps: RefreshDeps, limit: number): Promise<string[]> {
  const now = deps.clock.now();
  const rows = await deps.db.kysely
    .selectFrom('locations')
    .select('id')
    .where('provider', 'in', [...OAUTH_PROVIDERS])
    .where((eb) =>
      eb.or([
        eb('refresh_requested', '=', 1),
        eb.and([
          eb('status', '=', 'active'),
          eb('access_token_expires_at', '<=', now + deps.settings.aheadMs),
          eb('refresh_after', '<=', now),
        ]),
      ]),
    )
    .where(leaseFree(LOCATION_REFRESH, now))
    .orderBy('refresh_requested', 'desc')
    .orderBy('access_token_expires_at', 'asc')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}
