// The checkpoints of streamed copies: the multipart upload a copy is writing and each part the
// provider acknowledged, recorded as it finishes, so that the copy's next attempt (after a crash, a
// lost lease or a passing failure) continues from the first missing part (docs/engine.md,
// "Resumption"). Kept beside the work rows, never in them: only src/lifecycle/ writes those.
//
// Every write checks, in the same statement, that the writer holds the lease on the work (the
// job_objects or transfers row is running under its name) — graphile-worker's rule, as in the
// lifecycle modules — and part writes also that the checkpoint is the writer's: a new lease holder
// takes the checkpoint over (load()), after which a stale worker's parts are refused, and it stops.
import { type ExpressionBuilder, sql } from 'kysely';
import type { Database } from '../db/schema.js';
import { FerryError } from '../errors.js';
import type { RecordedUpload, UploadCheckpoint } from '../objects/object-copy.js';
import type { Queryable } from '../queue/moves.js';
import type { ResumableUpload, Store, UploadedPart } from '../stores/contract.js';

/** The work a copy runs for: one object of a bulk job, or a single transfer. */
export type Work = { kind: 'object'; jobId: string; seq: number } | { kind: 'transfer'; id: string };

export function workKey(work: Work): string {
  return work.kind === 'object' ? `object:${work.jobId}:${work.seq}` : `transfer:${work.id}`;
}

/** True (as SQL) while `owner` holds the lease on `work`. */
function leaseHeld(work: Work, owner: string) {
  return (eb: ExpressionBuilder<Database, keyof Database>) =>
    work.kind === 'object'
      ? eb.exists(
          eb
            .selectFrom('job_objects')
            .select(sql.lit(1).as('one'))
            .where('job_objects.job_id', '=', work.jobId)
            .where('job_objects.seq', '=', work.seq)
            .where('job_objects.status', '=', 'running')
            .where('job_objects.lease_owner', '=', owner),
        )
      : eb.exists(
          eb
            .selectFrom('transfers')
            .select(sql.lit(1).as('one'))
            .where('transfers.id', '=', work.id)
            .where('transfers.status', '=', 'running')
            .where('transfers.lease_owner', '=', owner),
        );
}

function lost(work: Work): FerryError {
  return new FerryError('transient', `${workKey(work)}: the lease was lost; the upload is another worker's`);
}

/** The checkpoint of `work`, written in the name of the lease holder `owner`. */
export function checkpointOf(db: Queryable, work: Work, owner: string, now: () => number): UploadCheckpoint {
  const key = workKey(work);
  return {
    async load(): Promise<RecordedUpload | undefined> {
      // Take the checkpoint over from whoever wrote it (a dead or stale worker): from here on only
      // this lease holder may add parts.
      const taken = await db
        .updateTable('copy_checkpoints')
        .set({ lease_owner: owner })
        .where('work', '=', key)
        .where(leaseHeld(work, owner))
        .returningAll()
        .executeTakeFirst();
      if (taken === undefined) return undefined;
      const parts = await db
        .selectFrom('copy_checkpoint_parts')
        .select(['part_index', 'tag', 'size'])
        .where('work', '=', key)
        .orderBy('part_index')
        .execute();
      const upload: ResumableUpload = { uploadId: taken.upload_id, partSize: Number(taken.part_size) };
      return {
        destinationPath: taken.destination_path,
        sourceEtag: taken.source_etag,
        size: Number(taken.size),
        upload,
        parts: parts.map((p) => ({ index: p.part_index, tag: p.tag, size: Number(p.size) })),
      };
    },

    async start(record): Promise<void> {
      await db.transaction().execute(async (trx) => {
        await trx
          .deleteFrom('copy_checkpoints')
          .where('work', '=', key)
          .where(leaseHeld(work, owner))
          .execute();
        const inserted = await trx
          .insertInto('copy_checkpoints')
          .columns([
            'work',
            'lease_owner',
            'destination_path',
            'source_etag',
            'size',
            'upload_id',
            'part_size',
            'created_at',
          ])
          .expression(
            trx
              .selectNoFrom((eb) => [
                eb.val(key).as('work'),
                eb.val(owner).as('lease_owner'),
                eb.val(record.destinationPath).as('destination_path'),
                eb.val(record.sourceEtag).as('source_etag'),
                eb.val(record.size).as('size'),
                eb.val(record.upload.uploadId).as('upload_id'),
                eb.val(record.upload.partSize).as('part_size'),
                eb.val(now()).as('created_at'),
              ])
              .where(leaseHeld(work, owner)),
          )
          .executeTakeFirst();
        if (Number(inserted.numInsertedOrUpdatedRows ?? 0) !== 1) throw lost(work);
      });
    },

    async part(part: UploadedPart): Promise<void> {
      const written = await db
        .insertInto('copy_checkpoint_parts')
        .columns(['work', 'part_index', 'tag', 'size'])
        .expression((eb) =>
          eb
            .selectFrom('copy_checkpoints')
            .select([
              'copy_checkpoints.work',
              eb.val(part.index).as('part_index'),
              eb.val(part.tag).as('tag'),
              eb.val(part.size).as('size'),
            ])
            .where('copy_checkpoints.work', '=', key)
            .where('copy_checkpoints.lease_owner', '=', owner)
            .where(leaseHeld(work, owner)),
        )
        .onConflict((oc) =>
          oc.columns(['work', 'part_index']).doUpdateSet((eb) => ({
            tag: eb.ref('excluded.tag'),
            size: eb.ref('excluded.size'),
          })),
        )
        .executeTakeFirst();
      if (Number(written.numInsertedOrUpdatedRows ?? 0) !== 1) throw lost(work);
    },

    async clear(): Promise<void> {
      await db.deleteFrom('copy_checkpoints').where('work', '=', key).where(leaseHeld(work, owner)).execute();
    },
  };
}

/** Why abort(): the reason a worker aborts the objects of a job canceled meanwhile. */
export const JOB_CANCELED = new FerryError('invalid', 'the job was canceled');

/**
 * Gives up a checkpointed upload for good (the copy failed for good, or its job was canceled): aborts
 * it at the destination (S3 AbortMultipartUpload; Azure has no such call and drops uncommitted
 * blocks after 7 days) and deletes the record. `by: 'lease'` while the caller holds the lease on the
 * work (a lasting failure, before it is settled); `by: 'checkpoint'` when the lease may be gone but
 * the work will not run again (a canceled job's object is parked at once) and the record is still
 * the caller's. A stale worker finds nothing either way.
 */
export async function abandonUpload(
  db: Queryable,
  work: Work,
  owner: string,
  destination: Store,
  by: 'lease' | 'checkpoint',
): Promise<void> {
  const key = workKey(work);
  const mine = db.selectFrom('copy_checkpoints').selectAll().where('work', '=', key);
  const recorded = await (by === 'lease'
    ? mine.where(leaseHeld(work, owner))
    : mine.where('lease_owner', '=', owner)
  ).executeTakeFirst();
  if (recorded === undefined) return;
  const upload = { uploadId: recorded.upload_id, partSize: Number(recorded.part_size) };
  await destination.features.resumable?.abort(recorded.destination_path, upload);
  await db
    .deleteFrom('copy_checkpoints')
    .where('work', '=', key)
    .where('upload_id', '=', recorded.upload_id)
    .execute();
}
