// A share link as the API answers it, and POST /share's body (docs/api.md, "Share links"): the server's
// view type, the routes' schemas (so /openapi.json) and the CLI's type come from these schemas.
import { type Static, Type } from 'typebox';
import { SHARE_STATES } from '../states.js';
import { Literal, Password } from './input.js';
import { oneOf, Path, Timestamp } from './text.js';

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

export const SharePage = Type.Object({
  shares: Type.Array(Share),
  next_cursor: Type.Optional(Type.String()),
});
export type SharePage = Static<typeof SharePage>;

export const ShareDownloadPage = Type.Object({
  downloads: Type.Array(ShareDownload),
  next_cursor: Type.Optional(Type.String()),
});
export type ShareDownloadPage = Static<typeof ShareDownloadPage>;

/** POST /share. */
export const CreateShareBody = Type.Object(
  {
    file: Path({
      description: '<location>/<path>; a pattern must match exactly one file',
    }),
    literal: Literal(),
    password: Type.Optional(Password()),
    expires_at: Type.Optional(Timestamp),
    max_downloads: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1_000_000,
        description:
          'downloads the link serves: a GET answers a landing page whose button POSTs the download; ranges that continue a download count nothing',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateShareBody = Static<typeof CreateShareBody>;
