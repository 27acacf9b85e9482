// The fake's OAuth 2.0 token endpoint for service accounts: the JWT-bearer grant (RFC 7523) as Google
// serves it. The assertion's RS256 signature is checked against the public key registered for its
// `iss` (client_email), so a key file with the wrong private key is refused with invalid_grant, as
// Google refuses it. Also checks `aud` (the token URL), `exp` and `iat`.
// https://developers.google.com/identity/protocols/oauth2/service-account#authorizingrequests
// (request and answer), and its "Handling the response" / error answers.
// Access tokens, their expiry and the bearer check are the shared harness's (FakeOAuth, ../oauth.ts);
// the answers are filled in from ./fixtures (token, token_invalid_grant).
import { createPublicKey, createVerify, generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fill, fixture, fixtureBody } from '../fixtures.js';
import { FakeOAuth } from '../oauth.js';
import { readBody, sendJson } from '../server.js';

const GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const TOKEN_TTL_SECONDS = 3599;

export class ServiceAccountOAuth {
  readonly #accounts = new Map<string, KeyObject>();
  readonly #tokens = new FakeOAuth({ prefix: 'ya29.', accessTokenTtlSeconds: TOKEN_TTL_SECONDS });
  /** Token requests answered so far (successful or not). */
  requests = 0;

  /** Registers a service account: its e-mail and the public half of its key (PEM). */
  addAccount(clientEmail: string, publicKeyPem: string): void {
    this.#accounts.set(clientEmail, createPublicKey(publicKeyPem));
  }

  /** A new account with a key pair of its own: its private key (PEM), for the location's secret. */
  newAccount(clientEmail: string): string {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    this.addAccount(clientEmail, publicKey);
    return privateKey;
  }

  /** Makes every access token issued so far invalid (as if it expired). */
  expireTokens(): void {
    this.#tokens.expireAll();
  }

  /** The service account an `Authorization: Bearer …` header belongs to, or undefined. */
  check(authorization: string | undefined): string | undefined {
    const check = this.#tokens.checkBearer(authorization);
    return check.ok ? check.owner : undefined;
  }

  /** POST {tokenUrl}: grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=… */
  async handle(req: IncomingMessage, res: ServerResponse, tokenUrl: string): Promise<void> {
    this.requests++;
    const form = new URLSearchParams((await readBody(req)).toString('utf8'));
    const refused = fixture('gcs', 'token_invalid_grant');
    const refusedBody = fixtureBody('gcs', 'token_invalid_grant');
    if (form.get('grant_type') !== GRANT_TYPE) {
      return sendJson(
        res,
        refused.status,
        fill(refusedBody, {
          error: 'unsupported_grant_type',
          error_description: `Invalid grant_type: ${form.get('grant_type') ?? ''}`,
        }),
      );
    }
    const refusal = this.#verify(form.get('assertion') ?? '', tokenUrl);
    if (typeof refusal === 'string') {
      return sendJson(res, refused.status, fill(refusedBody, { error_description: refusal }));
    }
    sendJson(res, 200, fill(fixtureBody('gcs', 'token'), this.#tokens.issueAccess(refusal.account)));
  }

  /** The account the assertion proves, or Google's error_description for refusing it. */
  #verify(assertion: string, tokenUrl: string): { account: string } | string {
    const parts = assertion.split('.');
    if (parts.length !== 3)
      return 'Invalid JWT: Token must be a short-lived token and in a reasonable timeframe';
    const [head, body, signature] = parts as [string, string, string];
    let header: { alg?: string };
    let claims: { iss?: string; aud?: string; exp?: number; iat?: number; scope?: string };
    try {
      header = JSON.parse(Buffer.from(head, 'base64url').toString('utf8'));
      claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      return 'Invalid JWT Signature.';
    }
    if (header.alg !== 'RS256') return 'Invalid JWT Signature.';
    const key = claims.iss === undefined ? undefined : this.#accounts.get(claims.iss);
    if (!key) return 'Invalid grant: account not found';
    const valid = createVerify('RSA-SHA256')
      .update(`${head}.${body}`)
      .verify(key, Buffer.from(signature, 'base64url'));
    if (!valid) return 'Invalid JWT Signature.';
    if (claims.aud !== tokenUrl) return 'Invalid JWT: Failed audience check.';
    const now = Math.floor(Date.now() / 1000);
    if (
      typeof claims.iat !== 'number' ||
      typeof claims.exp !== 'number' ||
      claims.exp <= now ||
      claims.iat > now + 300 ||
      claims.exp - claims.iat > 3600
    ) {
      return 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.';
    }
    if (!claims.scope) return 'Invalid OAuth scope or ID token audience provided.';
    return { account: claims.iss as string };
  }
}
