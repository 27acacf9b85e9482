// The one fake OAuth 2.0 authorization server of the tests: the provider fakes (dropbox, box, drive,
// onedrive; gcs's service-account grant keeps its access tokens here too) and the refresher's tests
// (./token-server.ts). It owns the grants: it issues access/refresh token pairs, answers the
// provider fakes' "is this bearer token valid, and whose is it?", and serves the token endpoint for the
// refresh_token grant (RFC 6749 section 6), with the error answers of RFC 6749 section 5.2.
//
// Refresh-token rotation, per provider (docs/api.md, "Location health": rotation_class):
// - 'stable': the refresh token stays valid and the answer carries none (Dropbox: "Refresh token",
//   https://developers.dropbox.com/oauth-guide ; Google: "Refreshing an access token",
//   https://developers.google.com/identity/protocols/oauth2/web-server#offline).
// - 'rotating': every answer carries a new refresh token and the old one keeps working (Microsoft
//   identity platform, "Refresh the access token",
//   https://learn.microsoft.com/entra/identity-platform/v2-oauth2-auth-code-flow#refresh-the-access-token).
// - 'single-use': every answer carries a new refresh token and the one used is dead at once; using it
//   again answers invalid_grant (Box, "Refresh a token",
//   https://developer.box.com/guides/authentication/tokens/refresh).
// `rotation` can be changed at any time, and answers can be forced with failNext(). Requests are
// checked and answered in the `provider`'s own format (./token-formats.ts, from the recorded answers
// in <provider>/fixtures); a FakeOAuth without a provider only issues and checks access tokens.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, sendJson } from './server.js';
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
  /** Injected clock (ms). */
  now?: () => number;
  /** Check requests and write answers as this provider does; required to serve the token endpoint. */
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
  /** RFC 3339, as in ferry's OAuth secret (docs/api.md, "Secrets by provider"). */
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
  /**
   * Milliseconds to wait before answering a refresh (after the grant was used): a slow endpoint, which
   * widens the moments where processes compete (test/refresher/processes.test.ts). No outcome may
   * depend on its length; to order events, `onRefresh` holds the answer until the test lets it go.
   */
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

  /**
   * An access token for `owner` with no refresh token behind it: what a grant that is not refreshed
   * issues (Google's service-account JWT grant, ./gcs/oauth.ts). Expires like the others.
   */
  issueAccess(owner: string): { access_token: string; expires_in: number } {
    const access = this.#mintAccess({ owner, revoked: false });
    return { access_token: access.token, expires_in: this.#ttl() };
  }

  /** Makes every access token issued so far expire now. */
  expireAll(): void {
    const now = this.#now();
    for (const token of this.#access.values()) token.expiresAt = now;
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
    const provider = this.#options.provider;
    if (!provider) throw new Error('a FakeOAuth without a provider serves no token endpoint');
    const form = new URLSearchParams((await readBody(req)).toString('utf8'));
    const forced = this.#forced.shift();
    if (forced !== undefined) return this.#sendForced(res, forced);
    if (req.method !== 'POST') return sendJson(res, 405, { error: 'invalid_request' });
    const refused = checkRequest(provider, req, form);
    if (refused) return this.#send(res, refused);

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
    sendJson(
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

  #send(res: ServerResponse, answer: { status: number; body: unknown; headers?: Record<string, string> }) {
    if (res.destroyed) return;
    for (const [name, value] of Object.entries(answer.headers ?? {})) res.setHeader(name, value);
    sendJson(res, answer.status, answer.body);
  }

  #sendForced(res: ServerResponse, answer: ForcedAnswer) {
    if (typeof answer === 'object') return this.#send(res, answer);
    const provider = this.#options.provider as TokenProvider;
    return this.#send(res, errorAnswer(provider, answer));
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
