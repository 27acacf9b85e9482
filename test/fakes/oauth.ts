// A fake OAuth 2.0 authorization server for the provider fakes (dropbox, box, drive, onedrive) and,
// later, the refresher's tests. It owns the grants: it issues access/refresh token pairs, answers the
// provider fakes' "is this bearer token valid, and whose is it?", and serves the token endpoint for the
// refresh_token grant (RFC 6749 section 6), with the error answers of RFC 6749 section 5.2.
//
// Refresh-token rotation, per provider (DECISIONS "Rotation classes"):
// - 'stable': the refresh token stays valid and the answer carries none (Dropbox: "Refresh token",
//   https://developers.dropbox.com/oauth-guide ; Google: "Refreshing an access token",
//   https://developers.google.com/identity/protocols/oauth2/web-server#offline).
// - 'rotating': every answer carries a new refresh token and the old one keeps working (Microsoft
//   identity platform, "Refresh the access token",
//   https://learn.microsoft.com/entra/identity-platform/v2-oauth2-auth-code-flow#refresh-the-access-token).
// - 'single-use': every answer carries a new refresh token and the one used is dead at once; using it
//   again answers invalid_grant (Box, "Refresh a token",
//   https://developer.box.com/guides/authentication/tokens/refresh).
// `rotation` can be changed at any time, and answers can be forced with failNext(). With `provider`
// set, requests are checked and answered in that provider's own format (./token-formats.ts).
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type ClientCredentials,
  checkRequest,
  clientOf,
  errorAnswer,
  successBody,
  type TokenErrorKind,
  type TokenProvider,
} from './token-formats.js';

export type RefreshRotation = 'stable' | 'rotating' | 'single-use';

export interface FakeOAuthOptions {
  rotation?: RefreshRotation;
  /** When set, the token endpoint demands this client (form fields or HTTP Basic). */
  clientId?: string;
  clientSecret?: string;
  /** Lifetime of issued access tokens. Default 3600. */
  accessTokenTtlSeconds?: number;
  /** Token prefix, to make tokens look like the provider's ("sl." for Dropbox). */
  prefix?: string;
  /** error_description of invalid_grant answers. */
  invalidGrantDescription?: string;
  /** Injected clock (ms). */
  now?: () => number;
  /** Check requests and write answers as this provider does. */
  provider?: TokenProvider;
}

/** One refresh_token grant request as the endpoint received it (never a client secret). */
export interface RefreshRecord {
  refreshToken: string;
  clientId: string | undefined;
  clientVia: ClientCredentials['via'];
  scope: string | null;
  /** The form's field names, in order. */
  fields: string[];
}

export interface IssuedTokens {
  access_token: string;
  refresh_token: string;
  /** RFC 3339, as in ferry's OAuth secret (SPEC 2.2). */
  expiry: string;
}

/** A forced answer for the next token request. */
export type ForcedAnswer =
  | TokenErrorKind
  | { status: number; body: unknown; headers?: Record<string, string> };

/** What a provider fake learns from a bearer header. */
export type BearerCheck =
  | { ok: true; owner: string }
  | { ok: false; reason: 'missing' | 'invalid' | 'expired' };

interface Grant {
  owner: string;
  revoked: boolean;
}

interface AccessToken {
  grant: Grant;
  expiresAt: number;
}

export class FakeOAuth {
  rotation: RefreshRotation;
  readonly #options: FakeOAuthOptions;
  readonly #now: () => number;
  readonly #access = new Map<string, AccessToken>();
  readonly #refresh = new Map<string, Grant>();
  readonly #forced: ForcedAnswer[] = [];
  /** Every refresh_token grant request received, in order (refresh tokens only; for assertions). */
  readonly refreshRequests: string[] = [];
  /** The same requests with how the client authenticated and what the form held. */
  readonly refreshRecords: RefreshRecord[] = [];
  /** Milliseconds to wait before answering a refresh (after the grant was used). */
  answerDelayMs = 0;
  /**
   * Called once a refresh token has been used (for single-use tokens: spent) and before the answer is
   * written; the answer waits for it. Tests kill a process here.
   */
  onRefresh: ((refreshToken: string, req: IncomingMessage) => Promise<void> | void) | undefined;
  /** invalid_grant answers given, with the refresh token that was refused. */
  readonly refused: string[] = [];

  constructor(options: FakeOAuthOptions = {}) {
    this.#options = options;
    this.rotation = options.rotation ?? 'stable';
    this.#now = options.now ?? Date.now;
  }

  /** A new grant for `owner` (the account id the provider fake reports), as if a user consented. */
  issue(owner = 'account-1'): IssuedTokens {
    const grant: Grant = { owner, revoked: false };
    const refresh = this.#token('r');
    this.#refresh.set(refresh, grant);
    const access = this.#mintAccess(grant);
    return {
      access_token: access.token,
      refresh_token: refresh,
      expiry: new Date(access.expiresAt).toISOString(),
    };
  }

  /** Checks an Authorization header value as a provider's API would. */
  checkBearer(header: string | undefined): BearerCheck {
    const match = /^Bearer (\S+)$/i.exec(header ?? '');
    if (!match?.[1]) return { ok: false, reason: 'missing' };
    const token = this.#access.get(match[1]);
    if (!token || token.grant.revoked) return { ok: false, reason: 'invalid' };
    if (token.expiresAt <= this.#now()) return { ok: false, reason: 'expired' };
    return { ok: true, owner: token.grant.owner };
  }

  /** True while `refreshToken` would be accepted (issued, not spent, not revoked). */
  isLive(refreshToken: string): boolean {
    const grant = this.#refresh.get(refreshToken);
    return grant !== undefined && !grant.revoked;
  }

  /** Makes an access token expire now. */
  expireAccessToken(accessToken: string): void {
    const token = this.#access.get(accessToken);
    if (token) token.expiresAt = this.#now();
  }

  /** Revokes the grant behind a refresh or access token: every token of it stops working. */
  revoke(token: string): void {
    const grant = this.#refresh.get(token) ?? this.#access.get(token)?.grant;
    if (grant) grant.revoked = true;
  }

  /** Forces the answer of the next token request (queued, first in first out). */
  failNext(answer: ForcedAnswer): void {
    this.#forced.push(answer);
  }

  /** Serves POST <token endpoint> with an application/x-www-form-urlencoded body. */
  async handleToken(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = new URLSearchParams((await readBody(req)).toString('utf8'));
    const forced = this.#forced.shift();
    if (forced !== undefined) return this.#sendForced(res, forced);
    if (req.method !== 'POST') return sendJson(res, 405, { error: 'invalid_request' });
    const provider = this.#options.provider;
    if (provider) {
      const refused = checkRequest(provider, req, form);
      if (refused) return this.#send(res, refused);
    }

    const client = clientOf(req, form);
    if (
      (this.#options.clientId !== undefined && client.id !== this.#options.clientId) ||
      (this.#options.clientSecret !== undefined && client.secret !== this.#options.clientSecret)
    ) {
      return this.#sendForced(res, 'invalid_client');
    }
    const grantType = form.get('grant_type');
    if (grantType !== 'refresh_token') {
      return sendJson(res, 400, {
        error: grantType ? 'unsupported_grant_type' : 'invalid_request',
        error_description: grantType ? `unsupported grant type: ${grantType}` : 'missing grant_type',
      });
    }
    const refresh = form.get('refresh_token');
    if (!refresh)
      return sendJson(res, 400, { error: 'invalid_request', error_description: 'missing refresh_token' });
    this.refreshRequests.push(refresh);
    this.refreshRecords.push({
      refreshToken: refresh,
      clientId: client.id,
      clientVia: client.via,
      scope: form.get('scope'),
      fields: [...form.keys()],
    });
    const grant = this.#refresh.get(refresh);
    if (!grant || grant.revoked) {
      this.refused.push(refresh);
      return this.#sendForced(res, 'invalid_grant');
    }

    const access = this.#mintAccess(grant);
    let next: string | undefined;
    if (this.rotation !== 'stable') {
      next = this.#token('r');
      this.#refresh.set(next, grant);
      if (this.rotation === 'single-use') this.#refresh.delete(refresh);
    }
    await this.onRefresh?.(refresh, req);
    if (this.answerDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.answerDelayMs));
    if (provider) {
      return sendJson(
        res,
        200,
        successBody(provider, {
          access: access.token,
          refresh: next,
          ttlSeconds: this.#ttl(),
          scope: form.get('scope'),
        }),
      );
    }
    const body: Record<string, unknown> = {
      access_token: access.token,
      token_type: 'bearer',
      expires_in: this.#ttl(),
    };
    if (next) body.refresh_token = next;
    sendJson(res, 200, body);
  }

  #send(res: ServerResponse, answer: { status: number; body: unknown; headers?: Record<string, string> }) {
    if (res.destroyed) return;
    for (const [name, value] of Object.entries(answer.headers ?? {})) res.setHeader(name, value);
    sendJson(res, answer.status, answer.body);
  }

  #sendForced(res: ServerResponse, answer: ForcedAnswer) {
    if (typeof answer === 'object') return this.#send(res, answer);
    const provider = this.#options.provider;
    if (provider) return this.#send(res, errorAnswer(provider, answer));
    switch (answer) {
      case 'invalid_grant':
        return sendJson(res, 400, {
          error: 'invalid_grant',
          error_description: this.#options.invalidGrantDescription ?? 'Invalid refresh token',
        });
      case 'invalid_client':
        return sendJson(res, 401, {
          error: 'invalid_client',
          error_description: 'Invalid client credentials',
        });
      case 'server_error':
        return sendJson(res, 500, { error: 'server_error', error_description: 'Internal error' });
      case 'throttled':
        res.setHeader('retry-after', '7');
        return sendJson(res, 429, {
          error: 'temporarily_unavailable',
          error_description: 'Too many requests',
        });
      default:
        return sendJson(res, 400, { error: answer });
    }
  }

  #mintAccess(grant: Grant): { token: string; expiresAt: number } {
    const token = this.#token('a');
    const expiresAt = this.#now() + this.#ttl() * 1000;
    this.#access.set(token, { grant, expiresAt });
    return { token, expiresAt };
  }

  #ttl(): number {
    return this.#options.accessTokenTtlSeconds ?? 3600;
  }

  #token(kind: 'a' | 'r'): string {
    return `${this.#options.prefix ?? ''}${kind}${randomBytes(18).toString('base64url')}`;
  }
}

// Small helpers for the provider fakes' servers.

/** The whole request body. */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.statusCode = status;
  if (text !== '') res.setHeader('content-type', 'application/json');
  res.setHeader('content-length', Buffer.byteLength(text));
  res.end(text);
}

/** A single "bytes=a-b", "bytes=a-" or "bytes=-n" (RFC 9110 14.1.2). */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'unsatisfiable' | undefined {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header ?? '');
  if (!match) return undefined;
  const [, a = '', b = ''] = match;
  if (a === '' && b === '') return undefined;
  if (a === '') {
    const n = Number(b);
    return n === 0 || size === 0 ? 'unsatisfiable' : { start: Math.max(size - n, 0), end: size - 1 };
  }
  const start = Number(a);
  if (start >= size) return 'unsatisfiable';
  return { start, end: b === '' ? size - 1 : Math.min(Number(b), size - 1) };
}
