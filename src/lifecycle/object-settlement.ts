// Settling a job's objects: what an attempt decided (src/lifecycle/outcome.ts, Settlement) written as
// succeed, retryLater or fail (OBJECT_MOVES), many objects in one transaction with their jobs' counters,
// each only while its worker still holds the lease.

import { sql, type UpdateObject } from 'kysely';
import type { Database, JobObjectRow } from '../db/schema.js';
import { objectTouched } from '../durable/work.js';
import { JOB_OBJECTS } from '../queue/leased.js';
import { unleased } from '../queue/leases.js';
import { type Queryable, rowsChanged } from '../queue/moves.js';
import type { ObjectStatus, Verdict } from '../states.js';
import { type Counter, count, VERDICT_COUNTERS } from './job-counters.js';
import { held, OBJECT_MOVES } from './objects.js';
import { provenAs, type Settlement } from './outcome.js';

export interface ObjectSettlement {
  object: Pick<JobObjectRow, 'job_id' | 'seq'>;
  settlement: Settlement;
}

/**
 * succeed, retryLater or fail each object as its settlement says, in one transaction with the jobs'
 * counters (one counter update per job). An object whose lease was lost is not written nor counted:
 * false at its place in the answer. One transaction for many objects is one commit: on PostgreSQL
 * that, more than the statements, is what a settled object costs.
 */
export async function settleMany(q: Queryable, owner: string, items: ObjectSettlement[]): Promise<boolean[]> {
  if (items.length === 0) return [];
  const released = unleased(JOB_OBJECTS);
  return q.transaction().execute(async (trx) => {
    const written: boolean[] = items.map(() => false);
    const deltas = new Map<string, Partial<Record<Counter, number>>>();
    const add = (jobId: string, counter: Counter, n: number) => {
      const d = deltas.get(jobId) ?? {};
      d[counter] = (d[counter] ?? 0) + n;
      deltas.set(jobId, d);
    };
    // Objects done (the common case) are written with one UPDATE per job for the batch; retries and
    // failures, which carry their own error text, one each.
    const done = new Map<string, number[]>(); // job -> indexes into items
    for (const [i, { object, settlement }] of items.entries()) {
      if (settlement.kind === 'done') {
        done.set(object.job_id, [...(done.get(object.job_id) ?? []), i]);
        continue;
      }
      const set: UpdateObject<Database, 'job_objects'> =
        settlement.kind === 'again'
          ? {
              status: OBJECT_MOVES.retryLater.to[0],
              error: settlement.error,
              run_after: settlement.runAfter,
              // The attempt ended without crashing: its claim's crash is taken back.
              ...(settlement.crashed ? {} : { crashes: sql<number>`crashes - 1` }),
              ...released,
            }
          : { status: OBJECT_MOVES.fail.to[0], error: settlement.error, ...released };
      const ok = rowsChanged(await held(trx, owner, object).set(set).executeTakeFirst()) > 0;
      written[i] = ok;
      if (!ok || settlement.kind === 'again') continue; // still pending as the counters go
      add(object.job_id, 'objects_pending', -1);
      add(object.job_id, 'objects_failed', 1);
    }
    for (const [jobId, indexes] of done) {
      const bySeq = new Map<
        number,
        {
          index: number;
          bytes: number;
          /** The object's size, when it is not the bytes moved (a verify's: it reads both sides, or none). */
          size: number;
          skipped: boolean;
          deleted: boolean;
          checksums?: { source: string; destination: string };
          /** How its written bytes were proven, as the row keeps it: `size` or the kinds. */
          verified?: string;
          /** What a verify found (docs/api.md, "Verify"). */
          verdict?: Verdict;
          /** JSON of what its work did at its destination (src/engine/backup.ts, Touched). */
          touched?: string;
        }
      >();
      for (const i of indexes) {
        const item = items[i] as ObjectSettlement & { settlement: { kind: 'done' } };
        bySeq.set(item.object.seq, {
          index: i,
          bytes: item.settlement.bytes,
          size: item.settlement.bytesTotal ?? item.settlement.bytes,
          skipped: item.settlement.skipped === true,
          deleted: item.settlement.deleted === true,
          ...(item.settlement.checksums === undefined ? {} : { checksums: item.settlement.checksums }),
          ...(item.settlement.verified === undefined ? {} : { verified: provenAs(item.settlement.verified) }),
          ...(item.settlement.verdict === undefined ? {} : { verdict: item.settlement.verdict }),
          ...(item.settlement.touched === undefined
            ? {}
            : { touched: objectTouched.encode(item.settlement.touched) }),
        });
      }
      const seqs = [...bySeq.keys()];
      // Per row: its status (succeeded or skipped) and its size, chosen by seq. The cast gives
      // PostgreSQL the sizes' type, which a CASE of bare parameters would leave as text.
      const bigints = (of: (row: { bytes: number; size: number } | undefined) => number) =>
        sql<number>`case ${sql.join(
          seqs.map((seq) => sql`when seq = ${seq} then cast(${of(bySeq.get(seq)) ?? 0} as bigint)`),
          sql` `,
        )} end`;
      const sizes = bigints((row) => row?.bytes ?? 0);
      const objectSizes = seqs.some((seq) => bySeq.get(seq)?.size !== bySeq.get(seq)?.bytes)
        ? bigints((row) => row?.size ?? 0)
        : sizes;
      const skipped = seqs.filter((seq) => bySeq.get(seq)?.skipped === true);
      // The checksums the copies compared (docs/api.md, "Reports"), chosen by seq as the sizes are;
      // null for the objects that compared none (and for a batch where none did, without a CASE).
      const hashed = seqs.filter((seq) => bySeq.get(seq)?.checksums !== undefined);
      const hash = (side: 'source' | 'destination') =>
        hashed.length === 0
          ? null
          : sql<string | null>`case ${sql.join(
              hashed.map(
                (seq) => sql`when seq = ${seq} then cast(${bySeq.get(seq)?.checksums?.[side]} as text)`,
              ),
              sql` `,
            )} else null end`;
      // How each written object was proven (docs/api.md, "Verification"), chosen by seq the same way.
      const proven = seqs.filter((seq) => bySeq.get(seq)?.verified !== undefined);
      const verified =
        proven.length === 0
          ? null
          : sql<string | null>`case ${sql.join(
              proven.map((seq) => sql`when seq = ${seq} then cast(${bySeq.get(seq)?.verified} as text)`),
              sql` `,
            )} else null end`;
      // What each verify's object found, chosen by seq the same way.
      const judged = seqs.filter((seq) => bySeq.get(seq)?.verdict !== undefined);
      const verdict =
        judged.length === 0
          ? null
          : sql<Verdict | null>`case ${sql.join(
              judged.map((seq) => sql`when seq = ${seq} then cast(${bySeq.get(seq)?.verdict} as text)`),
              sql` `,
            )} else null end`;
      // What each object's work did at its destination, for an undo (docs/api.md, "Undo"); a row
      // without one keeps what it had (a sync's copy planned as a creation that was skipped keeps it,
      // and an undo reads only succeeded objects).
      const recorded = seqs.filter((seq) => bySeq.get(seq)?.touched !== undefined);
      const touched =
        recorded.length === 0
          ? undefined
          : sql<string | null>`case ${sql.join(
              recorded.map((seq) => sql`when seq = ${seq} then cast(${bySeq.get(seq)?.touched} as text)`),
              sql` `,
            )} else touched end`;
      const [succeeded, skip] = OBJECT_MOVES.succeed.to;
      const rows = await trx
        .updateTable('job_objects')
        .set({
          status:
            skipped.length === 0
              ? succeeded
              : sql<ObjectStatus>`case when seq in (${sql.join(skipped)}) then ${skip} else ${succeeded} end`,
          bytes_done: sizes,
          size: objectSizes,
          source_hash: hash('source'),
          destination_hash: hash('destination'),
          verified,
          verdict,
          ...(touched === undefined ? {} : { touched }),
          error: null,
          ...released,
        })
        .where('job_id', '=', jobId)
        .where('seq', 'in', seqs)
        .where('lease_owner', '=', owner)
        .where('status', '=', 'running')
        .returning('seq')
        .execute();
      for (const { seq } of rows) {
        const row = bySeq.get(seq);
        if (!row) continue;
        written[row.index] = true;
        const settlement = (items[row.index] as ObjectSettlement).settlement;
        if (settlement.kind === 'done' && settlement.reason !== undefined) {
          // Why it was left alone (docs/api.md, "Plans"): shown with the failures.
          await trx
            .updateTable('job_objects')
            .set({ error: settlement.reason })
            .where('job_id', '=', jobId)
            .where('seq', '=', seq)
            .execute();
        }
        add(jobId, 'objects_pending', -1);
        add(
          jobId,
          row.skipped ? 'objects_skipped' : row.deleted ? 'objects_deleted' : 'objects_succeeded',
          1,
        );
        add(jobId, 'bytes_finished', row.bytes);
        if (row.verified === 'size') add(jobId, 'objects_size_only', 1);
        if (row.verdict !== undefined) add(jobId, VERDICT_COUNTERS[row.verdict], 1);
      }
    }
    for (const [jobId, by] of deltas) await count(trx, jobId, by);
    return written;
  });
}

/** One object's settlement (settleMany with one item); false when the lease was lost. */
export async function settle(
  q: Queryable,
  owner: string,
  object: Pick<JobObjectRow, 'job_id' | 'seq'>,
  settlement: Settlement,
): Promise<boolean> {
  const [written] = await settleMany(q, owner, [{ object, settlement }]);
  return written === true;
}
