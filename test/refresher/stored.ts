// What the refresher's tests read back: the OAuth secret a location holds now, opened with the test
// app's keyring, as the refresher stored it.
import type { OAuthSecret } from '../../src/providers.js';
import type { TestApp } from '../support/app.js';

export async function storedSecret(t: TestApp, id: string): Promise<OAuthSecret> {
  const row = await t.services.db.kysely
    .selectFrom('locations')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return JSON.parse(t.services.keyring.open(row.secret_envelope, id).reveal()) as OAuthSecret;
}
