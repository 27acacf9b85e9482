// A share link as the API answers it (docs/api.md, "Share links"): the server's view type, the route's
// response schema (so /openapi.json) and the CLI's type come from these schemas.
import { type Static, Type } from 'typebox';
import { SHARE_STATES } from '../states.js';
import { oneOf, Timestamp } from './text.js';

export const Share = Type.Object({
  id: Type.String({ format: 'uuid' }),
  source: Type.String({ description: '<location label>/<path> of the shared file, as it was when shared' }),
  state: oneOf(SHARE_STATES),
  created_at: Timestamp,
  expires_at: Type.Optional(Timestamp),
  revoked_at: Type.Optional(Timestamp),
  has_password: Type.Boolean(),
  downloads: Type.Integer({
    minimum: 0,
    description:
      'downloads counted: each answer from byte 0 once the source sent its first bytes, and with max_downloads each range from a client that began no download in the hour before',
  }),
  max_downloads: Type.Optional(
    Type.Integer({ minimum: 1, description: 'then 410, except for ranges that continue a download' }),
  ),
  last_download_at: Type.Optional(Timestamp),
});
export type Share = Static<typeof Share>;

/** POST /share's answer: the link, shown only then. */
export const CreatedShare = Type.Object({
  id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  expires_at: Type.Optional(Timestamp),
});
export type CreatedShare = Static<typeof CreatedShare>;

/** One counted download of a link (GET /v1/shares/{id}/downloads: the access log). */
export const ShareDownload = Type.Object({
  at: Timestamp,
  ip: Type.String({ description: "The client's address" }),
  status: Type.Integer({ description: '200, or 206 for a range' }),
  bytes: Type.Integer({ minimum: 0, description: 'Bytes written to the connection, once the answer ended' }),
  completed: Type.Boolean({
    description: 'The whole answer was written; false while it runs or when it was cut',
  }),
  ended_at: Type.Optional(Timestamp),
});
export type ShareDownload = Static<typeof ShareDownload>;
