// The refresh_token grant (RFC 6749 section 6) as each OAuth provider takes it, and the one table that
// sorts each provider's error answers into the refresher's four classes (docs/api.md, "Location
// health"). The refresher (src/domain/refresher/) owns what a class does to a location; this module only
// talks to the token endpoint and reads its answer.
//
// Request formats, from each provider's reference:
// - dropbox: POST form grant_type + refresh_token; the app key and secret as HTTP Basic, or client_id
//   alone in the form for an app without a secret (PKCE). Answer: access_token, expires_in, no new
//   refresh token. https://www.dropbox.com/developers/documentation/http/documentation#oauth2-token
// - drive (Google): POST form client_id, client_secret, refresh_token, grant_type. Answer:
//   access_token, expires_in, scope; a refresh_token only rarely.
//   https://developers.google.com/identity/protocols/oauth2/web-server#offline
// - onedrive (Microsoft identity platform v2): POST form client_id, scope (space-separated),
//   refresh_token, grant_type, client_secret. Answer: access_token, expires_in and a new refresh_token
//   that replaces the old one. https://learn.microsoft.com/entra/identity-platform/v2-oauth2-auth-code-flow#refresh-the-access-token
// - box: POST form grant_type, refresh_token, client_id, client_secret. Answer: access_token,
//   expires_in and a new refresh_token; the one sent is dead from then on.
//   https://developer.box.com/guides/authentication/tokens/refresh
import { type Dispatcher, request } from 'undici';
import { isFerryError } from '../../errors.js';
import { parseRetryAfter } from '../../net/failures.js';
import { deadline } from '../../net/time-bounds.js';
import type { OAuthProvider } from '../../providers.js';
import { Secret } from '../../secret.js';
import type { OAuthApp } from '../context.js';
import { bodyExcerpt, readText } from './http.js';

/**
 * What a failed refresh means (docs/api.md, "Location health"):
 * - terminal: the grant is gone (revoked, expired, already used); the location fails.
 * - interaction: the grant lives but a person must act (sign in again, MFA, consent).
 * - client: ferry's own application settings (FERRY_<PROVIDER>_CLIENT_*) were refused.
 * - passing: a network error, a timeout, 5xx, 429, temporarily_unavailable; tried again later.
 */
export type RefreshFailureClass = 'terminal' | 'interaction' | 'client' | 'passing';

export class RefreshFailure extends Error {
  override name = 'RefreshFailure';
  constructor(
    readonly failureClass: RefreshFailureClass,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export interface RefreshedTokens {
  accessToken: Secret;
  /** Epoch ms. */
  expiresAt: number;
  /** Present when the provider sent a new refresh token (it replaces the old one). */
  refreshToken?: Secret;
}

/** The default scope for Microsoft's refresh, when the location's metadata names none. */
export const ONEDRIVE_DEFAULT_SCOPE = 'offline_access Files.ReadWrite.All';

/**
 * Microsoft's AADSTS codes (https://learn.microsoft.com/entra/identity-platform/reference-error-codes),
 * read before the `error` field because Microsoft sends invalid_grant for both a dead grant and a grant
 * that waits on the user.
 */
const MICROSOFT_CODES: Record<number, RefreshFailureClass> = {
  // The grant is gone.
  70000: 'terminal', // InvalidGrant: the refresh token is malformed, revoked or not for this client
  70008: 'terminal', // ExpiredOrRevokedGrant
  700082: 'terminal', // ExpiredOrRevokedGrantInactiveToken: unused for too long
  700084: 'terminal', // the refresh token of a single-page app reached its 24 h lifetime
  50173: 'terminal', // FreshTokenNeeded: the grant ended with a password change
  54005: 'terminal', // OAuth2AuthorizationCodeAlreadyRedeemed
  // A person must act; the grant lives.
  50076: 'interaction', // UserStrongAuthClientAuthNRequired: MFA
  50079: 'interaction', // UserStrongAuthEnrollmentRequired: MFA enrolment
  50158: 'interaction', // ExternalSecurityChallenge
  53000: 'interaction', // DeviceNotCompliant (conditional access)
  53001: 'interaction', // DeviceNotDomainJoined (conditional access)
  53003: 'interaction', // BlockedByConditionalAccess
  50055: 'interaction', // InvalidPasswordExpiredPassword
  50057: 'interaction', // UserDisabled
  65001: 'interaction', // DelegationDoesNotExist: consent required
  // ferry's application settings.
  7000215: 'client', // InvalidClientSecretProvided
  7000222: 'client', // InvalidClientSecretExpiredKeysProvided
  700016: 'client', // UnauthorizedClient_DoesNotMatchRequest: no such application
  70011: 'client', // InvalidScope
  // Passing.
  50196: 'passing', // LoopDetected: too many identical requests, wait
  90033: 'passing', // MsodsServiceUnavailable
};

/** The OAuth `error` values every provider shares (RFC 6749 section 5.2), and the providers' own. */
const ERRORS: Record<string, RefreshFailureClass> = {
  invalid_grant: 'terminal',
  // Google: the client was deleted; Box: the grant belongs to another application.
  invalid_client: 'client',
  unauthorized_client: 'client',
  invalid_scope: 'client',
  deleted_client: 'client',
  // Microsoft and Google ask for the user.
  interaction_required: 'interaction',
  consent_required: 'interaction',
  login_required: 'interaction',
  temporarily_unavailable: 'passing',
  server_error: 'passing',
};

/** Google's `error_subtype` on invalid_grant: invalid_rapt means a reauthentication, not a dead grant. */
const GOOGLE_SUBTYPES: Record<string, RefreshFailureClass> = {
  invalid_rapt: 'interaction',
  rapt_required: 'interaction',
};

interface TokenErrorBody {
  error?: unknown;
  error_description?: unknown;
  error_subtype?: unknown;
  error_codes?: unknown;
  suberror?: unknown;
}

/** The class of a token endpoint's error answer. One function for the four providers. */
export function classifyTokenError(
  provider: OAuthProvider,
  status: number,
  json: unknown,
  text: string,
): { failureClass: RefreshFailureClass; detail: string } {
  const body = (typeof json === 'object' && json !== null ? json : {}) as TokenErrorBody;
  const error = typeof body.error === 'string' ? body.error : undefined;
  const description = typeof body.error_description === 'string' ? body.error_description : undefined;
  const detail =
    [error, description].filter((s) => s !== undefined).join(': ') ||
    bodyExcerpt(text, 300) ||
    `HTTP ${status}`;
  if (status >= 500 || status === 429) return { failureClass: 'passing', detail };
  if (provider === 'onedrive') {
    const codes = Array.isArray(body.error_codes) ? body.error_codes : [];
    for (const code of codes) {
      const known = typeof code === 'number' ? MICROSOFT_CODES[code] : undefined;
      if (known) return { failureClass: known, detail };
    }
    if (body.suberror === 'consent_required' || body.suberror === 'basic_action')
      return { failureClass: 'interaction', detail };
  }
  if (provider === 'drive' && typeof body.error_subtype === 'string') {
    const known = GOOGLE_SUBTYPES[body.error_subtype];
    if (known) return { failureClass: known, detail };
  }
  const known = error === undefined ? undefined : ERRORS[error];
  if (known) return { failureClass: known, detail };
  // An answer we cannot read (no error field, or an error of the provider's own): a 400 or 401 is
  // never tried again blindly, and nothing says the grant is gone, so a person looks at it.
  return { failureClass: 'interaction', detail };
}

export interface RefreshRequest {
  provider: OAuthProvider;
  app: OAuthApp;
  refreshToken: Secret;
  /** Microsoft's space-separated scopes (location metadata `scopes`). */
  scope?: string;
  timeoutMs: number;
  dispatcher?: Dispatcher;
  now: () => number;
}

/** The form body and headers of the refresh_token grant as `provider` documents it. */
export function tokenRequest(req: Omit<RefreshRequest, 'timeoutMs' | 'dispatcher' | 'now'>): {
  form: URLSearchParams;
  headers: Record<string, string>;
} {
  const { provider, app } = req;
  const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: req.refreshToken.reveal() });
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  const secret = app.clientSecret?.reveal();
  if (provider === 'dropbox' && app.clientId !== undefined && secret !== undefined) {
    // RFC 6749 2.3.1: both parts form-encoded before they are joined.
    const basic = `${encodeURIComponent(app.clientId)}:${encodeURIComponent(secret)}`;
    headers.authorization = `Basic ${Buffer.from(basic).toString('base64')}`;
  } else {
    if (app.clientId !== undefined) form.set('client_id', app.clientId);
    if (secret !== undefined) form.set('client_secret', secret);
  }
  if (provider === 'onedrive') form.set('scope', req.scope ?? ONEDRIVE_DEFAULT_SCOPE);
  return { form, headers };
}

/**
 * One refresh_token grant. Resolves with the new tokens, or rejects with a RefreshFailure whose
 * message keeps the provider's words and never a token or client secret.
 */
export async function refreshTokens(req: RefreshRequest): Promise<RefreshedTokens> {
  const { form, headers } = tokenRequest(req);
  // One bound on the whole request, answer included (docs/api.md, "Outbound calls"): a token endpoint
  // that stalls, before or during its answer, is a passing failure.
  const bound = deadline(req.timeoutMs, `${req.provider} token endpoint`);
  let response: Dispatcher.ResponseData;
  let text: string;
  try {
    try {
      response = await request(req.app.tokenUrl, {
        method: 'POST',
        headers,
        body: form.toString(),
        signal: bound.signal,
        headersTimeout: req.timeoutMs,
        bodyTimeout: req.timeoutMs,
        ...(req.dispatcher ? { dispatcher: req.dispatcher } : {}),
      });
    } catch (err) {
      if (isFerryError(err)) throw new RefreshFailure('passing', err.message);
      const code = (err as { code?: unknown; name?: unknown }).code ?? (err as { name?: unknown }).name;
      throw new RefreshFailure('passing', `token endpoint not reached (${String(code ?? 'error')})`);
    }
    try {
      text = await readText(response.body, 64 * 1024);
    } catch (err) {
      throw new RefreshFailure(
        'passing',
        isFerryError(err) ? err.message : 'the token endpoint answer was cut off',
      );
    }
  } finally {
    bound.clear();
  }
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  const status = response.statusCode;
  if (status < 200 || status >= 300) {
    const { failureClass, detail } = classifyTokenError(req.provider, status, json, text);
    throw new RefreshFailure(
      failureClass,
      `${req.provider} token endpoint answered ${status}: ${detail}`,
      parseRetryAfter(response.headers['retry-after']),
    );
  }
  const body = (json ?? {}) as { access_token?: unknown; expires_in?: unknown; refresh_token?: unknown };
  if (typeof body.access_token !== 'string' || body.access_token === '') {
    throw new RefreshFailure(
      'passing',
      `${req.provider} token endpoint answered ${status} without an access_token`,
    );
  }
  // expires_in is "recommended" only (RFC 6749 5.1); an hour is what all four give when they say.
  const seconds = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 3600;
  const tokens: RefreshedTokens = {
    accessToken: new Secret(body.access_token),
    expiresAt: req.now() + seconds * 1000,
  };
  if (typeof body.refresh_token === 'string' && body.refresh_token !== '')
    tokens.refreshToken = new Secret(body.refresh_token);
  return tokens;
}
