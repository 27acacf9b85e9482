// The leases a worker process holds on the engine's work (src/queue/leased.ts): its objects, single
// transfers and jobs' planning, in the order it renews, takes back and hands them back
// (src/queue/leases.ts, renewAll, takeBack, handBackAll), each with what its lifecycle does with work
// given up when its lease ran out on the last crash allowed.
import type { JobObjectRow } from '../db/schema.js';
import { JOB_OBJECTS, JOBS, TRANSFERS } from '../queue/leased.js';
import type { Kept } from '../queue/leases.js';
import type { Queryable } from '../queue/moves.js';
import * as jobs from './jobs.js';
import * as objects from './objects.js';
import * as transfers from './transfers.js';

/** A job with objects given up ends if nothing else is left of it. */
async function finishJobs(q: Queryable, given: JobObjectRow[], now: number): Promise<void> {
  for (const jobId of new Set(given.map((row) => row.job_id))) await jobs.finishIfDone(q, jobId, now);
}

export const WORKER_LEASES: readonly Kept[] = [
  { leased: JOB_OBJECTS, givenUp: objects.givenUp, afterGivenUp: finishJobs },
  { leased: TRANSFERS, givenUp: transfers.givenUp },
  { leased: JOBS },
];
