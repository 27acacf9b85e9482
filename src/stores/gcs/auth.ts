// Service-account credentials for @google-cloud/storage, with the token endpoint taken from the key file's
// `token_uri`, so tests and emulators can point it elsewhere. google-auth-library 9's JWT client always posts
// to Google's own token URL (gtoken hard-codes it), so this AuthClient does the JWT-bearer grant itself: an
// RS256-signed assertion (iss = client_email, aud = token_uri, one hour) exchanged for an access token,
// cached until shortly before it expires. The token request goes through the egress guard (the key file is
// caller-supplied); a refusal of the key surfaces as credentials_rejected. The token request is bounded as
// a whole, answer included (FERRY_OUTBOUND_ANSWER_SECONDS; docs/api.md, "Outbound calls"): a token
// endpoint that stalls is a transient failure.
// https://developers.google.com/identity/protocols/oauth2/service-account#authorizingrequests
import { createSign } from 'node:crypto';
import { AuthClient, type gaxios } from 'google-auth-library';
import { type Dispatcher, request } from 'undici';
import { deadline, OUTBOUND_DEFAULTS, type OutboundTimeouts } from '../../net/time-bounds.js';
import type { ServiceAccountKey } from '../../providers.js';
import type { Secret } from '../../secret.js';
import { answerError, connectionError, keyError, tokenError } from './errors.js';

const SCOPE = 'https://www.googleapis.com/auth/devstorage.full_control';
const GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** A token is renewed this long before it expires. */
const EXPIRY_MARGIN_MS = 60_000;
const TOKEN_ANSWER_LIMIT = 64 * 1024;

export interface ServiceAccountAuthOptions {
  key: Secret<ServiceAccountKey>;
  tokenUri: string;
  /** Where token requests are sent from: the egress guard's dispatcher. */
  dispatcher: Dispatcher;
  /** The agent for requests the storage library sends through request() (resumable uploads). */
  agentFor: (url: URL) => import('node:http').Agent | undefined;
  now?: () => number;
  /** FERRY_OUTBOUND_…; OUTBOUND_DEFAULTS when absent. */
  timeouts?: OutboundTimeouts | undefined;
}

export class ServiceAccountAuth extends AuthClient {
  readonly #options: ServiceAccountAuthOptions;
  #token: { value: string; expiresAt: number } | undefined;
  #pending: Promise<string> | undefined;

  constructor(options: ServiceAccountAuthOptions) {
    super();
    this.#options = options;
  }

  override async getAccessToken(): Promise<{ token: string }> {
    return { token: await this.#accessToken() };
  }

  override async getRequestHeaders(): Promise<Record<string, string>> {
    return { Authorization: `Bearer ${await this.#accessToken()}` };
  }

  /**
   * Requests the storage library sends itself (resumable upload sessions). Every non-2xx answer
   * except 308 (Resume Incomplete) is thrown as the store's error here, with its Retry-After, so the
   * library's own retry paths are never taken (stores never retry).
   */
  override async request<T>(opts: gaxios.GaxiosOptions): Promise<gaxios.GaxiosResponse<T>> {
    const headers = { ...opts.headers, ...(await this.getRequestHeaders()) };
    let res: gaxios.GaxiosResponse<T>;
    try {
      res = await this.transporter.request<T>({
        ...opts,
        headers,
        agent: (url: URL) => this.#options.agentFor(url),
        validateStatus: () => true,
      } as gaxios.GaxiosOptions);
    } catch (err) {
      throw connectionError(err, 'upload');
    }
    if (res.status >= 400) {
      throw answerError(
        { status: res.status, headers: res.headers as Record<string, string>, body: res.data },
        'upload',
      );
    }
    return res;
  }

  async #accessToken(): Promise<string> {
    const now = (this.#options.now ?? Date.now)();
    if (this.#token && this.#token.expiresAt - EXPIRY_MARGIN_MS > now) return this.#token.value;
    this.#pending ??= this.#fetchToken().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  async #fetchToken(): Promise<string> {
    const now = (this.#options.now ?? Date.now)();
    const body = new URLSearchParams({ grant_type: GRANT_TYPE, assertion: this.#assertion(now) }).toString();
    const timeouts = this.#options.timeouts ?? OUTBOUND_DEFAULTS;
    const bound = deadline(timeouts.answerMs, 'gcs: token request');
    let answer: Dispatcher.ResponseData;
    let text: string;
    try {
      answer = await request(this.#options.tokenUri, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body,
        dispatcher: this.#options.dispatcher,
        signal: bound.signal,
        headersTimeout: timeouts.headersMs,
        bodyTimeout: timeouts.idleMs,
      });
      text = await readLimited(answer.body);
    } catch (err) {
      throw connectionError(err, 'token request');
    } finally {
      bound.clear();
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const token = (json as { access_token?: unknown; expires_in?: unknown } | undefined) ?? {};
    if (answer.statusCode !== 200 || typeof token.access_token !== 'string') {
      throw tokenError({ status: answer.statusCode, headers: answer.headers, body: json ?? text });
    }
    const lifetime = typeof token.expires_in === 'number' ? token.expires_in : 3600;
    this.#token = { value: token.access_token, expiresAt: now + lifetime * 1000 };
    return token.access_token;
  }

  /** The signed JWT of the grant (RFC 7523 section 2.1). */
  #assertion(now: number): string {
    const key = this.#options.key.reveal();
    const iat = Math.floor(now / 1000);
    const header = { alg: 'RS256', typ: 'JWT', ...(key.private_key_id ? { kid: key.private_key_id } : {}) };
    const claims = { iss: key.client_email, scope: SCOPE, aud: this.#options.tokenUri, iat, exp: iat + 3600 };
    const unsigned = `${base64url(header)}.${base64url(claims)}`;
    let signature: string;
    try {
      signature = createSign('RSA-SHA256').update(unsigned).sign(key.private_key, 'base64url');
    } catch (err) {
      throw keyError(err);
    }
    return `${unsigned}.${signature}`;
  }
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

async function readLimited(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buf = chunk as Buffer;
    if (size < TOKEN_ANSWER_LIMIT) chunks.push(buf.subarray(0, TOKEN_ANSWER_LIMIT - size));
    size += buf.length;
  }
  return Buffer.concat(chunks).toString('utf8');
}
