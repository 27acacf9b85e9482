// docs/api.md, "Secrets by provider": the secret's shape must match the provider's group, else 422.
// Messages name fields, never values.

import { METADATA_MAX_DEPTH } from '../../api/input.js';
import { parseRfc3339 } from '../../clock.js';
import { FerryError } from '../../errors.js';
import {
  type Provider,
  type ProviderSecret,
  type SecretGroup,
  type ServiceAccountKey,
  secretGroup,
} from '../../providers.js';
import { nestedDeeperThan } from './metadata.js';

/** Longest secret field: OAuth access tokens (JWTs) run to a few KiB, a key file to about 2 KiB. */
export const SECRET_FIELD_MAX = 16 * 1024;

const FIELDS: Record<SecretGroup, readonly string[]> = {
  'access-key': ['access_key_id', 'secret_access_key'],
  oauth: ['access_token', 'refresh_token', 'expiry'],
  'service-account': ['service_account_json'],
};

const unprocessable = (message: string) => new FerryError('unprocessable', message);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function serviceAccountKey(provider: Provider, raw: unknown): ServiceAccountKey {
  let key: unknown = raw;
  if (typeof raw === 'string') {
    if (raw.length > SECRET_FIELD_MAX) {
      throw unprocessable(`secret.service_account_json must be at most ${SECRET_FIELD_MAX} characters`);
    }
    try {
      key = JSON.parse(raw);
    } catch {
      throw unprocessable(
        `secret.service_account_json for ${provider} must be a service-account key file (JSON)`,
      );
    }
  }
  if (!isObject(key)) {
    throw unprocessable(`secret.service_account_json for ${provider} must be a JSON object or a JSON string`);
  }
  // The secret is serialized to be encrypted; JSON.stringify overflows the stack on deep nesting.
  if (nestedDeeperThan(key, METADATA_MAX_DEPTH)) {
    throw unprocessable(
      `secret.service_account_json must be nested at most ${METADATA_MAX_DEPTH} levels deep`,
    );
  }
  if (key.type !== 'service_account') {
    throw unprocessable('secret.service_account_json must have "type": "service_account"');
  }
  for (const field of ['client_email', 'private_key'] as const) {
    if (typeof key[field] !== 'string' || key[field] === '') {
      throw unprocessable(`secret.service_account_json must have a non-empty string "${field}"`);
    }
  }
  if (key.token_uri !== undefined && typeof key.token_uri !== 'string') {
    throw unprocessable('secret.service_account_json "token_uri" must be a string');
  }
  return key as ServiceAccountKey;
}

/** The secret, checked against the provider and normalised (a key file given as a string is parsed). */
export function checkSecret(provider: Provider, raw: unknown): ProviderSecret {
  const group = secretGroup(provider);
  const expected = FIELDS[group];
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
  if (group === 'service-account') {
    return { service_account_json: serviceAccountKey(provider, raw.service_account_json) };
  }
  for (const field of expected) {
    const value = raw[field];
    if (typeof value !== 'string' || value === '') {
      throw unprocessable(`secret.${field} for ${provider} must be a non-empty string`);
    }
    if (value.length > SECRET_FIELD_MAX) {
      throw unprocessable(`secret.${field} must be at most ${SECRET_FIELD_MAX} characters`);
    }
  }
  if (group === 'oauth') {
    try {
      parseRfc3339(raw.expiry as string, 'secret.expiry');
    } catch {
      throw unprocessable('secret.expiry must be an RFC 3339 date-time such as 2030-01-31T12:00:00Z');
    }
  }
  return raw as unknown as ProviderSecret;
}
