// What a sync does (docs/api.md, "Sync"): the destination prefix is listed (filtered as the source is),
// then the source; each source object equal at the destination by the compare mode is skipped, each
// missing or different one copied (overwrite always), and with `delete` each destination object the
// source lacks is removed, after the copies, at most max_delete of them. syncObjects yields that diff
// as planned objects, with no writes of its own: the planner commits them as a job's objects, and a
// dry run may show them instead.
//
// Memory: the destination listing is held in a Map of key → size, time and listed hashes while the
// source streams past it. That is fine up to the bulk limit (SYNC_MAX_DESTINATION objects, some tens
// of MiB); a destination holding more fails planning with the reason rather than growing without end.
// Past that a sorted merge of two listings would be needed, which not every store's listing allows.
import type { JobRow } from '../db/schema.js';
import { FerryError, isFerryError } from '../errors.js';
import { compileFilter, listFiltered } from '../objects/filter.js';
import type { Provider } from '../providers.js';
import type { CompareMode } from '../states.js';
import type { Entry, HashKind } from '../stores/contract.js';
import type { Held } from './lifecycle/objects.js';
import type { EngineContext } from './run-object.js';
import { decodeOptions, decodeRef, type JobOptions, type ObjectRef, type ObjectWork } from './specs.js';

/** Most destination objects a sync holds in memory (the bulk limit, as a manifest's). */
export const SYNC_MAX_DESTINATION = 100_000;

/** max_delete when the request gives none. */
export const DEFAULT_MAX_DELETE = 1000;

/**
 * Hash kinds each provider's listing reports for an object (src/stores/*\/list.ts), so that a sync
 * compares by checksum with no request per object. A provider absent here reports none: a checksum
 * compare with it is refused when the sync is accepted (docs/api.md, "Sync", its table).
 */
export const LISTING_HASHES: Partial<Record<Provider, readonly HashKind[]>> = {
  s3: ['md5'],
  r2: ['md5'],
  wasabi: ['md5'],
  azureblob: ['md5'],
  gcs: ['md5', 'crc32c'],
};

/** The hash kinds both providers' listings report; empty when a checksum compare is impossible. */
export function commonListingHashes(a: Provider, b: Provider): HashKind[] {
  const theirs = LISTING_HASHES[b] ?? [];
  return (LISTING_HASHES[a] ?? []).filter((kind) => theirs.includes(kind));
}

/** One object of a sync's plan. */
export interface SyncPlanned {
  /** Relative to the prefixes (a source's key, or a destination's for a deletion). */
  key: string;
  size: number | null;
  etag: string | null;
  /** pending: to copy (or, with `work`, to delete); skipped: equal already, with `reason`. */
  status: 'pending' | 'skipped';
  reason?: string;
  /** JSON of the deletion's work (ObjectWork op delete); absent for a copy. */
  work?: string;
  /** Held back until planned (the copies of a sync with delete) or until the copies settled (deletions). */
  held?: Held;
}

interface Listed {
  size: number;
  modTime: number | undefined;
  hashes: Entry['hashes'];
}

/** Whether the destination's object holds the source's, by `compare`; the reason when it does. */
export function equalBy(compare: CompareMode, source: Entry, destination: Listed): string | undefined {
  if (source.size !== destination.size) return undefined;
  switch (compare) {
    case 'size':
      return 'equal by size';
    case 'size-modtime': {
      const from = source.modTime?.getTime();
      const to = destination.modTime;
      // Not older than the source: a copy written after the source was is the source's content.
      return from !== undefined && to !== undefined && to >= from ? 'equal by size-modtime' : undefined;
    }
    case 'checksum': {
      for (const [kind, value] of Object.entries(source.hashes ?? {})) {
        if (value !== undefined && destination.hashes?.[kind as HashKind] === value)
          return `equal by checksum (${kind})`;
      }
      return undefined;
    }
  }
}

/** The folder a prefix names, as store.list takes it. */
function folderOf(prefix: string): string {
  return prefix.slice(0, -1);
}

/** What a sync works on: its prefixes (location ids resolved) and the options given. */
export interface SyncSpec {
  source: ObjectRef;
  destination: ObjectRef;
  options: JobOptions;
}

/** A sync job's spec, from its row. */
export function syncSpecOf(job: Pick<JobRow, 'source' | 'destination' | 'options'>): SyncSpec {
  return {
    source: decodeRef(job.source),
    destination: decodeRef(job.destination),
    options: decodeOptions(job.options),
  };
}

/**
 * A sync's diff, streamed; throws (a lasting error) past the limits of docs/api.md, "Sync". Takes the
 * spec rather than a job row, so that a dry run can stream the same diff without a job.
 */
export async function* syncObjects(ctx: EngineContext, spec: SyncSpec): AsyncGenerator<SyncPlanned> {
  const { source, destination, options } = spec;
  const compare = options.compare ?? 'size-modtime';
  const remove = options.delete === true;
  const maxDelete = options.max_delete ?? DEFAULT_MAX_DELETE;
  const filter = compileFilter(options.filter);
  const existing = await listDestination(ctx, destination, filter);
  // With deletions, nothing may change before their count is known to be within max_delete.
  const hold: Partial<Pick<SyncPlanned, 'held'>> = remove ? { held: 'until-planned' } : {};
  const { store, release } = await ctx.stores.acquire(source.location_id);
  try {
    for await (const entry of listFiltered(store, folderOf(source.path), { recursive: true, filter })) {
      const key = entry.path.slice(source.path.length);
      const there = existing.get(key);
      existing.delete(key);
      const reason = there === undefined ? undefined : equalBy(compare, entry, there);
      const planned: SyncPlanned = {
        key,
        size: entry.size,
        etag: entry.etag ?? null,
        status: reason === undefined ? 'pending' : 'skipped',
        ...(reason === undefined ? hold : { reason }),
      };
      yield planned;
    }
  } finally {
    release();
  }
  if (!remove || existing.size === 0) return;
  if (existing.size > maxDelete) {
    throw new FerryError(
      'conflict',
      `the sync would remove ${existing.size} objects at the destination, more than max_delete (${maxDelete}); nothing was copied or removed`,
    );
  }
  for (const key of existing.keys()) {
    const work: ObjectWork = {
      op: 'delete',
      target: { location_id: destination.location_id, path: destination.path + key },
    };
    yield {
      key,
      size: null,
      etag: null,
      status: 'pending',
      work: JSON.stringify(work),
      held: 'until-copied',
    };
  }
}

async function listDestination(
  ctx: EngineContext,
  destination: ObjectRef,
  filter: ReturnType<typeof compileFilter>,
): Promise<Map<string, Listed>> {
  const listed = new Map<string, Listed>();
  const { store, release } = await ctx.stores.acquire(destination.location_id);
  try {
    for await (const entry of listFiltered(store, folderOf(destination.path), { recursive: true, filter })) {
      if (listed.size >= SYNC_MAX_DESTINATION) {
        throw new FerryError(
          'invalid',
          `the destination prefix holds more than ${SYNC_MAX_DESTINATION} objects (passing the filter); a sync compares at most that many`,
        );
      }
      listed.set(entry.path.slice(destination.path.length), {
        size: entry.size,
        modTime: entry.modTime?.getTime(),
        hashes: entry.hashes,
      });
    }
  } catch (err) {
    // A destination prefix that does not exist yet holds nothing: the first sync creates it. On a
    // bucket store a missing bucket is the same answer from the listing, and the copies will say so.
    if (!isFerryError(err, 'not_found') || listed.size > 0) throw err;
  } finally {
    release();
  }
  return listed;
}
