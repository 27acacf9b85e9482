// Listing objects (docs/api.md, "Listing objects") and making a bucket (docs/api.md, "Buckets"): the
// entry every listing answers, POST /v1/list's body and answer, POST /v1/buckets's body.
import { type Static, Type } from 'typebox';
import { locationRefFields } from './input.js';
import { Label, Path, Timestamp } from './text.js';

/** One object, folder or bucket of a listing (a remove preview's and a new bucket's too). */
export const Entry = Type.Object({
  name: Type.String(),
  path: Type.String({ description: 'From the location root; bucket first on bucket stores' }),
  size: Type.Integer({ description: '-1 for buckets, 0 for folders' }),
  isDir: Type.Boolean(),
  mimeType: Type.Optional(Type.String()),
  modTime: Type.Optional(Timestamp),
});
export type Entry = Static<typeof Entry>;

export const ListBody = Type.Object(
  {
    ...locationRefFields,
    path: Type.Optional(Path({ minLength: 0, description: 'Folder, or bucket/folder; empty lists buckets' })),
    recurse: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);
export type ListBody = Static<typeof ListBody>;

/** POST /v1/list's answer. */
export const Listing = Type.Object({ hint: Type.Optional(Type.String()), entries: Type.Array(Entry) });
export type Listing = Static<typeof Listing>;

/** Longer than any provider allows (gcs: 222): the store's own rules name what is wrong. */
const BUCKET_MAX = 255;

export const BucketBody = Type.Object(
  {
    ...locationRefFields,
    bucket: Label({
      maxLength: BUCKET_MAX,
      description: "The new bucket's name, checked against the provider's naming rules",
    }),
  },
  { additionalProperties: false, required: ['bucket'] },
);
export type BucketBody = Static<typeof BucketBody>;
