// The bodies of POST /v1/copy and POST /v1/sync (docs/api.md, "Copy" and "Sync"), and of a schedule's
// copy and sync actions, which are the same bodies without dry_run (docs/api.md, "Schedules").
import { type Static, Type } from 'typebox';
import { COMPARE_MODES, OVERWRITE_MODES } from '../states.js';
import { oneOf, Path } from './text.js';
import { BandwidthLimit, Filter, Target } from './transfers.js';

/** The most keys a copy's manifest may list (a copy body may then be 8 MiB: src/http/routes/copy.ts). */
export const MANIFEST_MAX_KEYS = 100_000;

/** Where what the work deletes or overwrites is kept first (docs/api.md, "Undo"); not with dry_run. */
export const BackupTo = Type.Optional(
  Path({
    description: '<location>:<bucket>/<prefix> where every object it deletes or overwrites is kept first',
  }),
);

/** `dry_run`: answer a plan instead (docs/api.md, "Plans"). */
export const DryRun = (what: string) =>
  Type.Optional(Type.Boolean({ description: `answer a plan of ${what} and change nothing (see Plans)` }));

const copyFields = {
  from: Target,
  to: Target,
  manifest: Type.Optional(Type.Array(Path({ minLength: 0 }), { maxItems: MANIFEST_MAX_KEYS })),
  overwrite: Type.Optional(oneOf(OVERWRITE_MODES)),
  filter: Type.Optional(Filter),
  bandwidth_limit: Type.Optional(BandwidthLimit),
  backup_to: BackupTo,
};
/** A schedule's copy action: the body of a bulk POST /v1/copy without dry_run. */
export const ScheduledCopy = Type.Object(copyFields, {
  additionalProperties: false,
  required: ['from', 'to'],
});
export type ScheduledCopy = Static<typeof ScheduledCopy>;
/** POST /v1/copy. */
export const CopyBody = Type.Object(
  { ...copyFields, dry_run: DryRun('a bulk copy') },
  { additionalProperties: false, required: ['from', 'to'] },
);
export type CopyBody = Static<typeof CopyBody>;

const syncFields = {
  from: Target,
  to: Target,
  compare: Type.Optional(oneOf(COMPARE_MODES)),
  delete: Type.Optional(Type.Boolean()),
  max_delete: Type.Optional(
    Type.Integer({
      minimum: 0,
      description: "most objects removed; default: half the destination's objects, at most 1000",
    }),
  ),
  filter: Type.Optional(Filter),
  bandwidth_limit: Type.Optional(BandwidthLimit),
  backup_to: BackupTo,
};
/** A schedule's sync action: the body of POST /v1/sync without dry_run. */
export const ScheduledSync = Type.Object(syncFields, {
  additionalProperties: false,
  required: ['from', 'to'],
});
export type ScheduledSync = Static<typeof ScheduledSync>;
/** POST /v1/sync. */
export const SyncBody = Type.Object(
  { ...syncFields, dry_run: DryRun('the sync') },
  { additionalProperties: false, required: ['from', 'to'] },
);
export type SyncBody = Static<typeof SyncBody>;
