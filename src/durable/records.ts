// The durable JSON of what a workspace keeps besides queued work (src/domain): a schedule's action and
// the locations of the key that gave it, a key's scopes and locations, a send's recipients and the
// addresses its mail server refused, a location's metadata and its opened secret. Like the work's
// (./work.ts), each column's codec checks the shape it reads and names the row it refuses.
import { type Static, Type } from 'typebox';
import { codec } from './codec.js';

/** Names of ids or scopes, as a JSON array. */
const Names = Type.Array(Type.String());

/**
 * A schedule's action as it was given (docs/api.md, "Schedules"): `{"copy": <body>}`, `{"sync": <body>}`
 * or `{"verify": <body>}`. Only this outline is checked here: the body is checked by the domain that
 * accepts the route's requests, at create and patch time and again at each run
 * (src/domain/schedules/actions.ts), never by a copy of its rules.
 */
const Body = Type.Object({ from: Type.Unknown(), to: Type.Unknown() });
export const StoredAction = Type.Union([
  Type.Object({ copy: Body }),
  Type.Object({ sync: Body }),
  Type.Object({ verify: Body }),
]);
export type StoredAction = Static<typeof StoredAction>;

/** A send's recipients (src/domain/sends/sends.ts, Recipients). */
export const Recipients = Type.Object({
  to: Names,
  cc: Names,
  bcc: Names,
  replyTo: Names,
});
export type Recipients = Static<typeof Recipients>;

/** A location's metadata: the provider's fields, checked by its store when the location is saved. */
const Metadata = Type.Record(Type.String(), Type.Unknown());

/** The secret of an OAuth provider, opened: what the refresher reads and renews. */
export const OAuthSecret = Type.Object({
  access_token: Type.String(),
  refresh_token: Type.String(),
  /** RFC 3339 time at which access_token expires. */
  expiry: Type.String(),
});

/**
 * A location's secret once opened, of its provider's kind (src/providers.ts, ProviderSecret): checked
 * field by field when it was saved (src/domain/locations/secret-shape.ts), its outline here.
 */
const ProviderSecret = Type.Union([
  Type.Object({ access_key_id: Type.String(), secret_access_key: Type.String() }),
  OAuthSecret,
  Type.Object({
    service_account_json: Type.Object({
      type: Type.Literal('service_account'),
      client_email: Type.String(),
      private_key: Type.String(),
    }),
  }),
]);

/**
 * A transfer's `from` or `to` as its request gave it (display.ts, Given; docs/api.md, "What a transfer
 * is"): a path, a list of paths or URLs, or a copy's target by location name or id and path.
 */
export const GivenTarget = Type.Union([
  Type.String(),
  Type.Array(Type.String()),
  Type.Object({ name: Type.Optional(Type.String()), id: Type.Optional(Type.String()), path: Type.String() }),
]);

/** The owners a worker slot's holders recorded, newest last (src/queue/predecessor.ts). */
export const SlotOwners = Type.Array(Type.String());

export const scheduleAction = codec('schedules', 'action', StoredAction);
export const scheduleCallerLocations = codec('schedules', 'caller_locations', Names);
export const keyScopes = codec('api_keys', 'scopes', Names);
export const keyLocations = codec('api_keys', 'locations', Names);
export const sendRecipients = codec('sends', 'recipients', Recipients);
export const sendRefused = codec('sends', 'refused', Names);
export const locationMetadata = codec('locations', 'metadata', Metadata);
/** Read once opened by the keyring: the message names the row, never a field of the secret. */
export const locationSecret = codec('locations', 'secret_envelope', ProviderSecret);
export const oauthSecret = codec('locations', 'secret_envelope', OAuthSecret);
export const transferGivenFrom = codec('transfers', 'given_from', GivenTarget);
export const transferGivenTo = codec('transfers', 'given_to', GivenTarget);
/** Not a table of the database: the `holder` table of a worker slot's own file in the data dir. */
export const slotOwners = codec('holder', 'owners', SlotOwners);
