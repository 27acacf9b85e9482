// Refused authentications in the audit log (docs/api.md, "Audit log"): every API request answered 401
// for its key (missing, not valid, revoked, expired, or revoked while it ran) records `auth.refused`,
// with the client's address and user agent, never the token or the request. A key that exists but was
// refused (revoked, expired: RefusedKey) is recorded with its id in its workspace, where GET /v1/audit
// shows it to the workspace's admins; a token that names no key belongs to no workspace (null), and is
// kept for the operator (the database) only. Share links (public routes) answer their own 401
// for a wrong password and record `share.password_failed` instead.
//
// Bounded: a flood of bad requests must not write without bound. Each process records at most one
// refusal per client address per second (the first; the rest of that second are dropped), and at most
// ADDRESSES_PER_SECOND addresses a second; the row is written after the answer, off its path, so a
// refusal costs the client no database round trip. There is no per-address rate limit on
// unauthenticated requests to reuse (src/http/rate-limits.ts counts per workspace, after the key).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import type { Db } from '../db/database.js';
import { RefusedKey } from '../domain/api-keys.js';
import { record } from '../domain/audit/audit.js';
import type { Logger } from '../log.js';

/** The most distinct addresses whose refusal one process records in one second. */
export const ADDRESSES_PER_SECOND = 1000;

export class RefusedAuth {
  /** The second being counted, and the addresses recorded in it. */
  #second = -1;
  readonly #seen = new Set<string>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Whether a refusal from `ip` now is recorded (the first from it this second, while there is room). */
  admit(ip: string, now: number): boolean {
    const second = Math.floor(now / 1000);
    if (second !== this.#second) {
      this.#second = second;
      this.#seen.clear();
    }
    if (this.#seen.has(ip) || this.#seen.size >= ADDRESSES_PER_SECOND) return false;
    this.#seen.add(ip);
    return true;
  }

  /** Records the refusal of `request`, if admitted; never throws (a failure is logged). */
  async note(request: FastifyRequest, key: RefusedKey | undefined): Promise<void> {
    const now = this.clock.now();
    if (!this.admit(request.ip, now)) return;
    try {
      await record(
        this.db.kysely,
        {
          workspaceId: key?.workspaceId ?? null,
          keyId: key?.keyId ?? null,
          ip: request.ip,
          userAgent: request.headers['user-agent'],
        },
        { action: 'auth.refused', status: 401 },
        now,
      );
    } catch (err) {
      this.logger.warn(
        { err: err instanceof Error ? err.message : String(err) },
        'audit: auth.refused not recorded',
      );
    }
  }
}

/** Records each 401 of a route behind a key (and of the 404/405 answer, which is behind one too). */
export function registerRefusedAuth(app: FastifyInstance, refused: RefusedAuth): void {
  /** The known key a request was refused for, from its error. */
  const keys = new WeakMap<FastifyRequest, RefusedKey>();
  app.addHook('onError', (request, _reply, err, done) => {
    if (err instanceof RefusedKey) keys.set(request, err);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    if (reply.statusCode === 401 && request.routeOptions.config?.public !== true) {
      void refused.note(request, keys.get(request));
    }
    done();
  });
}
