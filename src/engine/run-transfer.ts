// One queued transfer (copy, move, remove, pull): run it and settle it (src/lifecycle/
// transfers.ts). A copy that runs again continues its checkpointed multipart upload (docs/engine.md,
// "Resumption"); the other kinds start over, and each is written so that a second run finishes what
// the first began (a moved object is no longer among the sources, a removed one no longer matches).
import type { TransferRow } from '../db/schema.js';
import { FerryError, isFerryError } from '../errors.js';
import { type DestinationRef, decodeSpec, type ObjectRef, type TransferSpec } from '../lifecycle/specs.js';
import * as transfers from '../lifecycle/transfers.js';
import type { Egress } from '../net/egress.js';
import type { OutboundTimeouts } from '../net/time-bounds.js';
import { openUrl } from '../objects/fetch-url.js';
import { copyObject, type UploadCheckpoint } from '../objects/object-copy.js';
import { moveObject } from '../objects/object-move.js';
import { expandSources, isPattern, splitPattern } from '../objects/patterns.js';
import { type Throttle, throttled } from '../objects/throttle.js';
import { DEFAULT_CRASH_POLICY } from '../queue/backoff.js';
import { whileAway } from '../queue/loop.js';
import type { Entry, HashKind, Store } from '../stores/contract.js';
import { attempt } from './attempt.js';
import { abandonUpload, checkpointOf, type Work } from './checkpoints.js';
import type { EngineContext } from './context.js';
import { explainNotFound } from './destination-bucket.js';
import type { StoreUse } from './store-cache.js';

export interface TransferContext extends EngineContext {
  egress: Egress;
  /** Time bounds of a pull's GET (FERRY_OUTBOUND_…); defaults when absent. */
  outbound?: OutboundTimeouts;
}

interface Outcome {
  bytesDone: number;
  bytesTotal?: number;
  /** The hash kinds that proved the bytes written, none when only the size could; absent when none were written. */
  verified?: HashKind[];
}

/**
 * What proved the bytes of every object a run wrote, as one (docs/api.md, "Verification"): the size
 * alone when any object was proven by no more, else every kind that proved one. Absent while none wrote.
 */
function provenTogether(sofar: HashKind[] | undefined, next: HashKind[] | undefined): HashKind[] | undefined {
  if (next === undefined) return sofar;
  if (sofar === undefined) return next;
  if (sofar.length === 0 || next.length === 0) return [];
  return [...new Set([...sofar, ...next])];
}

/**
 * Where one source entry lands: a folder destination keeps the entry's path below the pattern's base.
 * The one naming the planner, the worker and POST /move/preview use.
 */
export function destinationPath(
  destination: DestinationRef,
  source: ObjectRef,
  entry: Pick<Entry, 'path' | 'name'>,
): string {
  if (!destination.folder) return destination.path;
  if (!isPattern(source.path, source.literal)) return destination.path + entry.name;
  const { base } = splitPattern(source.path);
  const relative = base === '' ? entry.path : entry.path.slice(base.length + 1);
  return destination.path + relative;
}

/** One run of a transfer: what it does, and where it reports. */
interface Run {
  spec: TransferSpec;
  attemptNumber: number;
  signal: AbortSignal;
  progress: (bytes: number) => void;
  /** Writes the size of what the transfer moves, once known. */
  sized: (total: number) => Promise<void>;
  checkpoint: UploadCheckpoint;
  /** Opens a location's store for the rest of the run. */
  acquire: (locationId: string) => Promise<StoreUse>;
  /** The bandwidth caps the run's bytes wait for (docs/api.md, "Bandwidth"), if any. */
  throttle?: Throttle;
}

async function execute(ctx: TransferContext, run: Omit<Run, 'acquire'>): Promise<Outcome> {
  // Every store this run opens stays open until the run ends, and is released then.
  const held: StoreUse[] = [];
  const acquire = async (locationId: string) => {
    const use = await ctx.stores.acquire(locationId);
    held.push(use);
    return use;
  };
  try {
    return await executeWith(ctx, { ...run, acquire });
  } finally {
    for (const use of held) use.release();
  }
}

/**
 * Runs `each` on every object the sources name, one at a time. A plain source that an earlier run of
 * this transfer already moved or removed is done, not missing; on the first run, a transfer none of
 * whose sources matched anything is not_found (`what` names them).
 */
async function eachSource(
  { attemptNumber, signal, acquire }: Run,
  refs: readonly ObjectRef[],
  what: string,
  each: (store: Store, ref: ObjectRef, entry: Entry) => Promise<void>,
): Promise<void> {
  let matched = 0;
  for (const ref of refs) {
    const { store } = await acquire(ref.location_id);
    try {
      for await (const entry of expandSources(store, ref.path, signal, ref.literal)) {
        await each(store, ref, entry);
        matched++;
      }
    } catch (err) {
      if (!(isFerryError(err, 'not_found') && attemptNumber > 1 && !isPattern(ref.path, ref.literal)))
        throw err;
    }
  }
  if (matched === 0 && attemptNumber === 1) throw new FerryError('not_found', `no object matched ${what}`);
}

async function executeWith(ctx: TransferContext, run: Run): Promise<Outcome> {
  const { spec, signal, progress, sized, acquire, checkpoint, throttle } = run;
  const throttling = throttle === undefined ? {} : { throttle };
  switch (spec.kind) {
    case 'copy': {
      const source = await acquire(spec.source.location_id);
      const destination = await acquire(spec.destination.location_id);
      const outcome = await copyObject({
        source: source.store,
        sourcePath: spec.source.path,
        destination: destination.store,
        destinationPath: spec.destination.path,
        signal,
        onProgress: progress,
        onSource: (info) => sized(info.size),
        checkpoint,
        ...throttling,
      }).catch(async (err: unknown) => {
        throw await explainNotFound(
          err,
          {
            source: source.store,
            sourcePath: spec.source.path,
            destination,
            destinationPath: spec.destination.path,
          },
          signal,
        );
      });
      return {
        bytesDone: outcome.bytes,
        bytesTotal: outcome.bytes,
        ...(outcome.verified === undefined ? {} : { verified: outcome.verified }),
      };
    }
    case 'move': {
      const destination = await acquire(spec.destination.location_id);
      let done = 0;
      let verified: HashKind[] | undefined;
      await eachSource(run, spec.sources, 'the sources', async (store, ref, entry) => {
        const before = done;
        const outcome = await moveObject({
          source: store,
          sourcePath: entry.path,
          destination: destination.store,
          destinationPath: destinationPath(spec.destination, ref, entry),
          signal,
          onProgress: (bytes) => progress(before + bytes),
          ...throttling,
        });
        done = before + outcome.bytes;
        // A provider's own move writes nothing to prove (outcome.verified absent).
        verified = provenTogether(verified, outcome.verified);
      });
      return { bytesDone: done, bytesTotal: done, ...(verified === undefined ? {} : { verified }) };
    }
    case 'remove': {
      await eachSource(run, spec.paths, 'the paths', async (store, _ref, entry) => {
        await store.delete(entry.path, { signal }).catch((err: unknown) => {
          // Gone since it was listed (or removed by an earlier run): what was asked for holds.
          if (!isFerryError(err, 'not_found')) throw err;
        });
      });
      return { bytesDone: 0 };
    }
    case 'pull': {
      const { store } = await acquire(spec.destination.location_id);
      let done = 0;
      let total = 0;
      let verified: HashKind[] | undefined;
      for (const url of spec.urls) {
        const fetched = await openUrl(url, ctx.egress, {
          signal,
          ...(ctx.outbound === undefined ? {} : { timeouts: ctx.outbound }),
        });
        const path = spec.destination.folder ? spec.destination.path + fetched.name : spec.destination.path;
        // One URL whose server says its length: the size is known before the bytes start.
        if (spec.urls.length === 1 && fetched.size !== undefined) await sized(fetched.size);
        const before = done;
        const info = await store.write(path, throttled(fetched.body, throttle, signal), {
          signal,
          ...(fetched.size === undefined ? {} : { size: fetched.size }),
          ...(fetched.mimeType === undefined ? {} : { mimeType: fetched.mimeType }),
          onProgress: (bytes) => progress(before + bytes),
        });
        done = before + info.size;
        total += info.size;
        verified = provenTogether(verified, info.verified ?? []);
      }
      return { bytesDone: done, bytesTotal: total, ...(verified === undefined ? {} : { verified }) };
    }
  }
}

export async function runTransfer(
  ctx: TransferContext,
  transfer: TransferRow,
  signal: AbortSignal,
  /** How long its settlement is tried again while the database is away: the worker's lease. */
  patienceMs: number,
): Promise<void> {
  const { db, clock, owner } = ctx;
  const spec = decodeSpec(transfer);
  const work: Work = { kind: 'transfer', id: transfer.id };
  const checkpoint = checkpointOf(db.kysely, work, owner, () => clock.now());
  const throttle = ctx.bandwidth?.throttleFor({
    workspaceId: transfer.workspace_id,
    key: `transfer:${transfer.id}`,
    limit: transfer.bandwidth_limit,
  });
  const settlement = await attempt({
    clock,
    signal,
    attempts: transfer.attempts,
    crashes: { count: transfer.crashes, policy: ctx.crashes ?? DEFAULT_CRASH_POLICY },
    progress: (bytes) =>
      transfers.progress(db.kysely, owner, transfer.id, bytes, clock.now()).then(() => ctx.wakeStreams?.()),
    work: (report) =>
      execute(ctx, {
        spec,
        attemptNumber: transfer.attempts,
        signal,
        progress: report,
        sized: (total) =>
          transfers.sized(db.kysely, owner, transfer.id, total, clock.now()).then(() => ctx.wakeStreams?.()),
        checkpoint,
        ...(throttle === undefined ? {} : { throttle }),
      }),
    done: (outcome) => ({
      kind: 'done',
      bytes: outcome.bytesDone,
      ...(outcome.bytesTotal === undefined ? {} : { bytesTotal: outcome.bytesTotal }),
      ...(outcome.verified === undefined ? {} : { verified: outcome.verified }),
    }),
  });
  // A copy that failed for good leaves no multipart upload behind; one tried again later keeps it.
  if (settlement?.kind === 'failed' && spec.kind === 'copy') {
    await ctx.stores
      .use(spec.destination.location_id, ({ store }) => abandonUpload(db.kysely, work, owner, store, 'lease'))
      .catch((err: unknown) => ctx.logger.warn({ transfer: transfer.id, err }, 'upload not aborted'));
  }
  if (settlement === undefined) return;
  if (settlement.kind === 'failed') {
    ctx.logger.warn({ transfer: transfer.id, kind: transfer.kind, err: settlement.error }, 'transfer failed');
  }
  // A transfer that ended while the database is away keeps its result until it is back (for as long
  // as its lease), rather than counting a crash and running again (docs/api.md, "The database going
  // away").
  await whileAway(() => transfers.settle(db.kysely, owner, transfer.id, settlement, clock.now()), patienceMs);
}
