// How each OAuth provider's token endpoint takes a refresh_token grant and answers it, for FakeOAuth:
// the client authentication it expects, the fields it requires, the success body and its error bodies.
// From each provider's reference (the same pages src/stores/shared/token-endpoint.ts cites):
// - dropbox: app key/secret as HTTP Basic (or client_id alone for PKCE apps); answers access_token,
//   token_type "bearer", expires_in 14400; errors {error, error_description}.
// - drive (Google): client_id and client_secret in the form, never Basic; answers access_token,
//   expires_in 3599, scope, token_type "Bearer"; invalid_grant may carry error_subtype invalid_rapt.
// - onedrive (Microsoft identity platform): client_id, client_secret and a space-separated `scope` in
//   the form; answers token_type, scope, expires_in, ext_expires_in, access_token, refresh_token;
//   errors carry error_codes [AADSTS number], timestamp, trace_id, correlation_id, error_uri.
// - box: client_id and client_secret in the form; answers access_token, expires_in, restricted_to,
//   refresh_token, token_type "bearer"; errors {error, error_description}.
// The bodies are filled in from each provider's recorded answers (<provider>/fixtures/token*.json).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { fill, fixture, fixtureBody } from './fixtures.js';

export type TokenProvider = 'dropbox' | 'drive' | 'onedrive' | 'box';

/** The errors a test can force, named for what they mean; each provider answers in its own words. */
export type TokenErrorKind =
  | 'invalid_grant'
  | 'invalid_client'
  | 'unauthorized_client'
  | 'invalid_scope'
  | 'interaction'
  | 'server_error'
  | 'unavailable'
  | 'throttled';

export interface TokenAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface ClientCredentials {
  id?: string;
  secret?: string;
  /** How they came: 'basic' (Authorization header), 'form', or 'none'. */
  via: 'basic' | 'form' | 'none';
}

export function clientOf(req: IncomingMessage, form: URLSearchParams): ClientCredentials {
  const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '');
  if (basic?.[1]) {
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return {
      id: decodeURIComponent(decoded.slice(0, colon)),
      secret: decodeURIComponent(decoded.slice(colon + 1)),
      via: 'basic',
    };
  }
  const client: ClientCredentials = { via: 'none' };
  const id = form.get('client_id');
  const secret = form.get('client_secret');
  if (id !== null) client.id = id;
  if (secret !== null) client.secret = secret;
  if (id !== null || secret !== null) client.via = 'form';
  return client;
}

/**
 * What the provider says about the shape of a request before it looks at the grant: undefined when the
 * request is as the provider documents it.
 */
export function checkRequest(
  provider: TokenProvider,
  req: IncomingMessage,
  form: URLSearchParams,
): TokenAnswer | undefined {
  const type = req.headers['content-type'] ?? '';
  if (!type.startsWith('application/x-www-form-urlencoded')) {
    return errorAnswer(provider, 'invalid_request', 'the body must be application/x-www-form-urlencoded');
  }
  const client = clientOf(req, form);
  switch (provider) {
    case 'dropbox':
      // Basic with the app secret, the same two fields in the form, or client_id alone (PKCE): all
      // three are documented. FakeOAuth records which one came, for tests to check.
      return undefined;
    case 'drive':
    case 'box':
      if (client.via === 'basic')
        return errorAnswer(provider, 'invalid_request', 'client credentials must be in the request body');
      return undefined;
    case 'onedrive': {
      if (client.via === 'basic')
        return errorAnswer(provider, 'invalid_request', 'client credentials must be in the request body');
      const scope = form.get('scope');
      if (!scope || /,/.test(scope))
        return microsoftError(
          400,
          'invalid_request',
          900144,
          "The request body must contain the following parameter: 'scope'.",
        );
      return undefined;
    }
  }
}

/** The success body of a refresh, as the provider writes it. */
export function successBody(
  provider: TokenProvider,
  tokens: { access: string; refresh: string | undefined; ttlSeconds: number; scope: string | null },
): Record<string, unknown> {
  const template = fixtureBody(provider, 'token');
  const values: Record<string, unknown> = { access_token: tokens.access, expires_in: tokens.ttlSeconds };
  // Dropbox never sends a refresh token back; the others leave it out when they keep the old one.
  if (provider !== 'dropbox') values.refresh_token = tokens.refresh;
  if (provider === 'onedrive') {
    values.scope = tokens.scope ?? '';
    values.ext_expires_in = tokens.ttlSeconds;
  }
  return fill(template, values);
}

function microsoftError(status: number, error: string, code: number, text: string, extra = {}): TokenAnswer {
  const trace = randomUUID();
  const correlation = randomUUID();
  const timestamp = new Date()
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d{3}Z$/, 'Z');
  return {
    status,
    body: {
      ...fill(fixtureBody('onedrive', 'token_invalid_grant'), {
        error,
        error_description: `AADSTS${code}: ${text}\r\nTrace ID: ${trace}\r\nCorrelation ID: ${correlation}\r\nTimestamp: ${timestamp}`,
        error_codes: [code],
        timestamp,
        trace_id: trace,
        correlation_id: correlation,
        error_uri: `https://login.microsoftonline.com/error?code=${code}`,
      }),
      ...extra,
    },
  };
}

/** A provider's RFC 6749 error body ({error, error_description}, as its invalid_grant fixture). */
function oauthError(
  provider: TokenProvider,
  status: number,
  error: string,
  description: string,
): TokenAnswer {
  return {
    status,
    body: fill(fixtureBody(provider, 'token_invalid_grant'), { error, error_description: description }),
  };
}

/** A provider's answer for one kind of failure (or an RFC 6749 error name for request checks). */
export function errorAnswer(
  provider: TokenProvider,
  kind: TokenErrorKind | 'invalid_request',
  detail?: string,
): TokenAnswer {
  if (kind === 'throttled') {
    const answer =
      provider === 'onedrive'
        ? microsoftError(429, 'temporarily_unavailable', 90033, 'Too many requests.')
        : oauthError(provider, 429, 'rate_limit_exceeded', 'Too many requests');
    return { ...answer, headers: { 'retry-after': '7' } };
  }
  if (kind === 'server_error')
    return provider === 'onedrive'
      ? microsoftError(503, 'server_error', 90033, 'Service unavailable.')
      : oauthError(provider, 503, 'server_error', 'Service unavailable');
  if (provider === 'onedrive') {
    switch (kind) {
      case 'invalid_grant':
        return microsoftError(
          400,
          'invalid_grant',
          700082,
          'The refresh token has expired due to inactivity.',
        );
      case 'invalid_client':
        return microsoftError(401, 'invalid_client', 7000215, 'Invalid client secret provided.');
      case 'unauthorized_client':
        return microsoftError(
          400,
          'unauthorized_client',
          700016,
          'Application was not found in the directory.',
        );
      case 'invalid_scope':
        return microsoftError(
          400,
          'invalid_scope',
          70011,
          'The provided value for the input parameter scope is not valid.',
        );
      case 'interaction':
        return microsoftError(
          400,
          'invalid_grant',
          50076,
          'Due to a configuration change made by your administrator, you must use multi-factor authentication.',
          { suberror: 'basic_action' },
        );
      case 'unavailable':
        return microsoftError(
          400,
          'temporarily_unavailable',
          90033,
          'A transient error has occurred. Please try again.',
        );
      case 'invalid_request':
        return microsoftError(400, 'invalid_request', 900144, detail ?? 'The request is malformed.');
    }
  }
  const descriptions: Record<TokenProvider, Partial<Record<TokenErrorKind | 'invalid_request', string>>> = {
    dropbox: {
      invalid_grant: 'refresh token is invalid or revoked',
      invalid_client: 'Invalid client_id or client_secret',
    },
    drive: {
      invalid_grant: 'Token has been expired or revoked.',
      invalid_client: 'The OAuth client was not found.',
      unauthorized_client: 'Unauthorized',
    },
    onedrive: {},
    box: {
      invalid_grant: 'Refresh token has expired',
      invalid_client: 'The client credentials are invalid',
      unauthorized_client: 'The grant type is unauthorized for this client_id',
    },
  };
  const status = kind === 'invalid_client' && provider !== 'box' ? 401 : 400;
  if (kind === 'interaction') {
    // Google's reauthentication: invalid_grant with a subtype. Others have no such answer; Dropbox and
    // Box answer invalid_grant with a description, which is what they send then.
    if (provider === 'drive') {
      const recorded = fixture('drive', 'token_invalid_rapt');
      return { status: recorded.status, body: recorded.body };
    }
    return oauthError(provider, 400, 'interaction_required', 'the user must sign in again');
  }
  if (kind === 'unavailable') return oauthError(provider, 400, 'temporarily_unavailable', 'try again later');
  return oauthError(provider, status, kind, detail ?? descriptions[provider][kind] ?? kind);
}
