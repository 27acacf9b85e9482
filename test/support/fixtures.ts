// Test data: a valid secret for each provider, with values unique to the call so that tests can
// search rows, logs and responses for them.
import { randomBytes } from 'node:crypto';
import { describe } from 'node:test';
import { type Provider, secretGroup } from '../../src/providers.js';
import { type TestDatabase, testDatabases } from './databases.js';

export function unique(prefix: string): string {
  return `${prefix}-${randomBytes(8).toString('hex')}`;
}

export function secretFor(provider: Provider): Record<string, unknown> {
  switch (secretGroup(provider)) {
    case 'access-key':
      return { access_key_id: unique('AKID'), secret_access_key: unique('SAK') };
    case 'oauth':
      return {
        access_token: unique('AT'),
        refresh_token: unique('RT'),
        expiry: new Date(Date.now() + 3600_000).toISOString(),
      };
    case 'service-account':
      return {
        service_account_json: {
          type: 'service_account',
          project_id: 'ferry-test',
          client_email: 'ferry@ferry-test.iam.gserviceaccount.com',
          private_key: `-----BEGIN PRIVATE KEY-----\n${unique('PK')}\n-----END PRIVATE KEY-----\n`,
          token_uri: 'https://oauth2.googleapis.com/token',
        },
      };
  }
}

/** A gcs location's secret for a service account of the fake gcs (test/fakes): its key and token endpoint. */
export function gcsServiceAccount(privateKey: string, clientEmail: string, tokenUri: string) {
  return {
    service_account_json: {
      type: 'service_account',
      project_id: 'ferry-test',
      private_key: privateKey,
      client_email: clientEmail,
      token_uri: tokenUri,
    },
  };
}

/** The secret strings inside a secret, to search for. */
export function secretValues(secret: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(secret)) {
    if (key === 'expiry') continue;
    if (typeof value === 'string') out.push(value);
    else if (value && typeof value === 'object') {
      const pk = (value as Record<string, unknown>).private_key;
      if (typeof pk === 'string') out.push(pk.split('\n')[1] as string);
    }
  }
  return out;
}

/** One describe block per database (SQLite, PostgreSQL); a database that cannot run is skipped with the reason. */
export async function eachDatabase(title: string, body: (database: TestDatabase) => void): Promise<void> {
  for (const database of await testDatabases()) {
    describe(`${title} [${database.name}]`, { skip: database.skip ?? false }, () => body(database));
  }
}
