// The bodies and answers of pull, move, remove and their previews (docs/api.md, "Move, remove, pull").
import { type Static, Type } from 'typebox';
import { BackupTo } from './copy.js';
import { INPUT_MAX, Literal, Url } from './input.js';
import { Entry } from './listing.js';
import { Path } from './text.js';
import { Filter } from './transfers.js';

const Paths = Type.Union([Path(), Type.Array(Path(), { minItems: 1, maxItems: INPUT_MAX.sources })]);
const Urls = Type.Union([Url(), Type.Array(Url(), { minItems: 1, maxItems: INPUT_MAX.sources })]);
const DryRun = Type.Optional(
  Type.Boolean({ description: 'answer a plan of what would be done and do nothing (see Plans)' }),
);
const removeFields = { path: Paths, literal: Literal(), filter: Type.Optional(Filter) };
const moveFields = { from: Paths, to: Path(), literal: Literal(), filter: Type.Optional(Filter) };

export const PullBody = Type.Object({ from: Urls, to: Path() }, { additionalProperties: false });
export type PullBody = Static<typeof PullBody>;

/** POST /pull's answer: a single URL may be done before the answer. */
export const Pulled = Type.Object({
  id: Type.String(),
  status: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('complete')]),
});
export type Pulled = Static<typeof Pulled>;

export const MoveBody = Type.Object(
  { ...moveFields, backup_to: BackupTo, dry_run: DryRun },
  { additionalProperties: false },
);
export type MoveBody = Static<typeof MoveBody>;

export const RemoveBody = Type.Object(
  { ...removeFields, backup_to: BackupTo, dry_run: DryRun },
  { additionalProperties: false },
);
export type RemoveBody = Static<typeof RemoveBody>;

/** POST /move/preview's body: a move's, without backup_to or dry_run. */
export const MovePreviewBody = Type.Object(moveFields, { additionalProperties: false });
export type MovePreviewBody = Static<typeof MovePreviewBody>;
/** POST /remove/preview's body: a remove's, without backup_to or dry_run. */
export const RemovePreviewBody = Type.Object(removeFields, { additionalProperties: false });
export type RemovePreviewBody = Static<typeof RemovePreviewBody>;

export const RemovePreview = Type.Object({ entries: Type.Array(Entry) });
export type RemovePreview = Static<typeof RemovePreview>;

export const MovePreview = Type.Object({
  entries: Type.Array(
    Type.Object({
      from: Type.String({ description: '<location>/<path> of the object as it is now' }),
      to: Type.String({ description: '<location>/<path> where /move would put it' }),
    }),
  ),
});
export type MovePreview = Static<typeof MovePreview>;
