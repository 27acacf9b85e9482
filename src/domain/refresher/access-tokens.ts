// The live access token of each OAuth location, for the stores of this process (AccessTokenSource in
// src/stores/context.ts). A store asks for the token at every request: it is served from memory while
// it is good for more than a minute, read again from the database when it is not (the refresher has
// usually renewed it by then), and refreshed here, through the same lease as the refresher's, when it
// has expired or the provider refused it (a 401). Concurrent requests for one location share one
// renewal; a renewal under way in another process is waited for, never repeated.
import { oauthSecret } from '../../durable/records.js';
import { FerryError } from '../../errors.js';
import { Secret } from '../../secret.js';
import type { AccessTokenSource } from '../../stores/context.js';
import { type RefreshDeps, type RefreshResult, type RefreshTrigger, refreshLocation } from './refresh.js';

/** A token closer than this to its expiry is renewed before it is sent. */
export const EXPIRY_MARGIN_MS = 60_000;
const BUSY_POLL_MS = 200;
/** Tokens kept in memory at most; the oldest entry goes first (a deleted location's, a replaced secret's). */
const CACHE_MAX = 10_000;

/** A location's token as one store sees it: its cache key (per secret version), id and label. */
interface Target {
  key: string;
  id: string;
  label: string;
}

interface Cached {
  token: Secret;
  expiresAt: number | null;
}

export class AccessTokens {
  readonly #cache = new Map<string, Cached>();
  readonly #renewing = new Map<string, Promise<Secret>>();

  constructor(private readonly deps: RefreshDeps) {}

  /**
   * The token source a store of location `id` (named `label` in messages) reads. Tokens are kept per
   * secret version: a store opened after the secret was replaced never sends a token of the old one.
   */
  source(id: string, label: string, secretVersion: number): AccessTokenSource {
    const target: Target = { key: `${id}:${secretVersion}`, id, label };
    return {
      current: (signal) => this.#current(target, signal),
      renew: (rejected, signal) => {
        this.#cache.delete(target.key);
        return this.#renew(target, { kind: 'rejected', token: rejected.reveal() }, signal);
      },
    };
  }

  #remember(key: string, cached: Cached): void {
    this.#cache.delete(key);
    this.#cache.set(key, cached);
    if (this.#cache.size > CACHE_MAX) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
  }

  async #current(target: Target, signal?: AbortSignal): Promise<Secret> {
    const { key, id, label } = target;
    const now = this.deps.clock.now();
    const cached = this.#cache.get(key);
    if (cached && (cached.expiresAt === null || cached.expiresAt - now > EXPIRY_MARGIN_MS))
      return cached.token;
    const row = await this.deps.db.kysely
      .selectFrom('locations')
      .select(['id', 'secret_envelope', 'access_token_expires_at'])
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw new FerryError('credentials_rejected', `location ${label} (${id}) was deleted`);
    const expiresAt = row.access_token_expires_at;
    if (expiresAt === null || expiresAt - now > EXPIRY_MARGIN_MS) {
      const secret = oauthSecret.decode(this.deps.keyring.open(row.secret_envelope, id).reveal(), id);
      const token = new Secret(secret.access_token);
      this.#remember(key, { token, expiresAt });
      return token;
    }
    return this.#renew(target, { kind: 'expiring', marginMs: EXPIRY_MARGIN_MS }, signal);
  }

  #renew(target: Target, trigger: RefreshTrigger, signal?: AbortSignal): Promise<Secret> {
    let renewing = this.#renewing.get(target.key);
    if (!renewing) {
      renewing = this.#untilSettled(target, trigger, signal).finally(() => this.#renewing.delete(target.key));
      this.#renewing.set(target.key, renewing);
    }
    return renewing;
  }

  /** Refreshes until there is a token or a reason there is none; waits out another process's lease. */
  async #untilSettled(target: Target, trigger: RefreshTrigger, signal?: AbortSignal): Promise<Secret> {
    const { key, id, label } = target;
    const deadline = Date.now() + this.deps.settings.leaseMs + 5000;
    let next = trigger;
    while (true) {
      signal?.throwIfAborted();
      const result = await refreshLocation(this.deps, id, next);
      switch (result.kind) {
        case 'refreshed':
        case 'fresh':
          this.#remember(key, { token: result.token, expiresAt: result.expiresAt });
          return result.token;
        case 'gone':
          throw new FerryError('credentials_rejected', `location ${label} (${id}) was deleted`);
        case 'failed':
          throw failure(label, id, result);
        case 'lost':
          // The secret was replaced meanwhile: the new one is what to send.
          next = { kind: 'expiring', marginMs: EXPIRY_MARGIN_MS };
          break;
        case 'busy':
          if (Date.now() > deadline) {
            throw new FerryError(
              'transient',
              `the access token of location ${label} (${id}) is being refreshed elsewhere; try again`,
            );
          }
          // Then try again: whoever held the lease has usually refreshed, and their token is taken.
          await new Promise((resolve) => setTimeout(resolve, BUSY_POLL_MS));
          break;
      }
    }
  }
}

/** What a store's caller is told when there is no usable token. */
function failure(label: string, id: string, result: Extract<RefreshResult, { kind: 'failed' }>): FerryError {
  const where = `location ${label} (${id})`;
  if (result.failureClass === 'passing' && result.status === 'active') {
    return new FerryError(
      'transient',
      `could not refresh the access token of ${where}: ${result.message}`,
      result.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: result.retryAfterSeconds },
    );
  }
  // Already recorded on the location by the refresh: a conflict with its state, not a new verdict.
  if (result.failureClass === 'status') return new FerryError('conflict', result.message);
  return new FerryError('conflict', `${where} is ${result.status}: ${result.message}`);
}
