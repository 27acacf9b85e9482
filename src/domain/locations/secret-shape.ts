// docs/api.md, "Secrets by provider": the secret has exactly the fields the provider's store declares
// (src/stores/*/declaration.ts), each of its declared type, else 422. Messages name fields, never values.

import { METADATA_MAX_DEPTH } from '../../api/input.js';
import { parseRfc3339 } from '../../clock.js';
import { FerryError } from '../../errors.js';
import {
  declarationOf,
  type Provider,
  type ProviderSecret,
  type ServiceAccountKey,
} from '../../providers.js';
import { nestedDeeperThan } from './metadata.js';

/** Longest secret field: OAuth access tokens (JWTs) run to a few KiB, a key file to about 2 KiB. */
export const SECRET_FIELD_MAX = 16 * 1024;

const unprocessable = (message: string) => new FerryError('unprocessable', message);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function serviceAccountKey(provider: Provider, field: string, raw: unknown): ServiceAccountKey {
  let key: unknown = raw;
  if (typeof raw === 'string') {
    if (raw.length > SECRET_FIELD_MAX) {
      throw unprocessable(`secret.${field} must be at most ${SECRET_FIELD_MAX} characters`);
    }
    try {
      key = JSON.parse(raw);
    } catch {
      throw unprocessable(`secret.${field} for ${provider} must be a service-account key file (JSON)`);
    }
  }
  if (!isObject(key)) {
    throw unprocessable(`secret.${field} for ${provider} must be a JSON object or a JSON string`);
  }
  // The secret is serialized to be encrypted; JSON.stringify overflows the stack on deep nesting.
  if (nestedDeeperThan(key, METADATA_MAX_DEPTH)) {
    throw unprocessable(`secret.${field} must be nested at most ${METADATA_MAX_DEPTH} levels deep`);
  }
  if (key.type !== 'service_account') {
    throw unprocessable(`secret.${field} must have "type": "service_account"`);
  }
  for (const part of ['client_email', 'private_key'] as const) {
    if (typeof key[part] !== 'string' || key[part] === '') {
      throw unprocessable(`secret.${field} must have a non-empty string "${part}"`);
    }
  }
  if (key.token_uri !== undefined && typeof key.token_uri !== 'string') {
    throw unprocessable(`secret.${field} "token_uri" must be a string`);
  }
  return key as ServiceAccountKey;
}

/** The secret, checked against the provider and normalised (a key file given as a string is parsed). */
export function checkSecret(provider: Provider, raw: unknown): ProviderSecret {
  const fields = declarationOf(provider).secret;
  const expected = fields.map((f) => f.key);
  if (!isObject(raw)) {
    throw unprocessable(`secret for ${provider} must be an object with the fields ${expected.join(', ')}`);
  }
  const given = Object.keys(raw);
  const missing = expected.filter((f) => !given.includes(f));
  const extra = given.filter((f) => !expected.includes(f));
  if (missing.length > 0 || extra.length > 0) {
    const parts = [`secret for ${provider} must have exactly the fields ${expected.join(', ')}`];
    if (missing.length > 0) parts.push(`missing: ${missing.join(', ')}`);
    if (extra.length > 0) parts.push(`not expected: ${extra.join(', ')}`);
    throw unprocessable(parts.join('; '));
  }
  const secret: Record<string, unknown> = {};
  for (const { key, type } of fields) {
    const value = raw[key];
    if (type === 'service-account-key') {
      secret[key] = serviceAccountKey(provider, key, value);
      continue;
    }
    // A secret field of another declared type (url, boolean) would need its own check here.
    if (type !== 'string' && type !== 'time') {
      throw new FerryError(
        'internal',
        `secret.${key} for ${provider} is declared ${type}, which no check reads`,
      );
    }
    if (typeof value !== 'string' || value === '') {
      throw unprocessable(`secret.${key} for ${provider} must be a non-empty string`);
    }
    if (value.length > SECRET_FIELD_MAX) {
      throw unprocessable(`secret.${key} must be at most ${SECRET_FIELD_MAX} characters`);
    }
    if (type === 'time') {
      try {
        parseRfc3339(value, `secret.${key}`);
      } catch {
        throw unprocessable(`secret.${key} must be an RFC 3339 date-time such as 2030-01-31T12:00:00Z`);
      }
    }
    secret[key] = value;
  }
  return secret as unknown as ProviderSecret;
}
