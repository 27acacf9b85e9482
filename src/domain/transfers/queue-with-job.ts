// A transfer over several objects is run by a job of its own, object by object (docs/engine.md, "The
// pieces"): the two rows are written together, in the caller's transaction, by a move, remove or pull
// and by the run of a plan.

import { jobDestination, jobSource } from '../../durable/work.js';
import { newId } from '../../ids.js';
import * as jobs from '../../lifecycle/jobs.js';
import { type ObjectRef, specLocations, type TransferSpec } from '../../lifecycle/specs.js';
import type { Queued } from '../../lifecycle/transfers.js';
import * as transfers from '../../lifecycle/transfers.js';
import type { Queryable } from '../../queue/moves.js';

/**
 * A transfer over several objects and the job that runs it, in the caller's transaction, so neither
 * exists without the other; `planId` when the job runs a plan (docs/api.md, "Plans").
 */
export async function queueWithJob(
  trx: Queryable,
  workspaceId: string,
  spec: TransferSpec,
  given: transfers.Given,
  now: number,
  planId?: string,
  id?: string,
): Promise<{ queued: Queued; jobId: string }> {
  const queued = await transfers.enqueue(trx, workspaceId, spec, now, given, true, undefined, id);
  // The job's own source and destination only say where it works; each object carries its own.
  const refs = jobRefs(spec);
  const { job_id } = await jobs.create(
    trx,
    {
      id: newId(),
      workspaceId,
      source: jobSource.encode(refs.source),
      destination: jobDestination.encode(refs.destination),
      overwrite: 'always',
      manifest: undefined,
      transferId: queued.id,
      touches: specLocations(spec),
      ...(planId === undefined ? {} : { planId }),
    },
    now,
  );
  return { queued, jobId: job_id };
}

/** Where a job that runs a transfer works, as a job's source and destination (first source; destination). */
function jobRefs(spec: TransferSpec): { source: ObjectRef; destination: ObjectRef } {
  const strip = (ref: ObjectRef) => ({ location_id: ref.location_id, path: ref.path });
  switch (spec.kind) {
    case 'copy':
      return { source: spec.source, destination: spec.destination };
    case 'move':
      return { source: strip(spec.sources[0] as ObjectRef), destination: strip(spec.destination) };
    case 'remove':
      return { source: strip(spec.paths[0] as ObjectRef), destination: strip(spec.paths[0] as ObjectRef) };
    case 'pull':
      return { source: strip(spec.destination), destination: strip(spec.destination) };
  }
}
