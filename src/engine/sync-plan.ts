// What a sync does (docs/api.md, "Sync"): the destination prefix is listed (filtered as the source is),
// then the source; each source object equal at the destination by the compare mode is skipped, each
// missing or different one copied (overwrite always), and with `delete` each destination object the
// source lacks is removed, after the copies, at most max_delete of them (by default half of what the
// destination holds, at most 1000). syncObjects yields that diff
// as planned objects, with no writes of its own: the planner commits them as a job's objects, and a
// dry run may show them instead.
//
// Memory: the destination listing is held in a Map of key → size, time and listed hashes while the
// source streams past it. That is fine up to the bulk limit (SYNC_MAX_DESTINATION objects, some tens
// of MiB); a destination holding more fails planning with the reason rather than growing without end.
// Past that a sorted merge of two listings would be needed, which not every store's listing allows.
// A verify (src/engine/verify-plan.ts) pairs its two prefixes with the same listing merge
// (listDestination, then pairListings), so both hold the same bound.
import { objectWork } from '../durable/work.js';
import { FerryError, isFerryError } from '../errors.js';
import type { Held } from '../lifecycle/object-planning.js';
import type { JobOptions, ObjectRef, ObjectWork } from '../lifecycle/specs.js';
import { compileFilter, listFiltered } from '../objects/filter.js';
import { listingHashes, type Provider } from '../providers.js';
import type { CompareMode } from '../states.js';
import type { Entry, HashKind } from '../stores/contract.js';
import { backupOf } from './backup.js';
import type { OpenStore } from './planned.js';

/** Most destination objects a sync holds in memory (the bulk limit, as a manifest's). */
export const SYNC_MAX_DESTINATION = 100_000;

/** The most a sync removes when its request gives no max_delete, however large the destination. */
export const DEFAULT_MAX_DELETE_CAP = 1000;

/**
 * max_delete when the request gives none (docs/api.md, "Sync"): half the objects the sync compares at
 * the destination (its prefix, passing the filter), at most DEFAULT_MAX_DELETE_CAP. A fraction, not a
 * count alone, so that a mistyped destination is caught however small it is: a sync that would empty
 * most of it stops before anything changes.
 */
export function defaultMaxDelete(destinationObjects: number): number {
  return Math.min(Math.floor(destinationObjects / 2), DEFAULT_MAX_DELETE_CAP);
}

/**
 * Why a sync past its max_delete stops, and how to let it through: a retry of the same sync meets the
 * same limit, so the message names the field and the value that would pass.
 */
export function overMaxDelete(
  removing: number,
  destinationObjects: number,
  given: number | undefined,
): string {
  const cap = given ?? defaultMaxDelete(destinationObjects);
  const limit =
    given === undefined
      ? `${cap}: by default half the destination's objects, at most ${DEFAULT_MAX_DELETE_CAP}`
      : String(cap);
  return (
    `the sync would remove ${removing} of the ${destinationObjects} objects at the destination, more than max_delete (${limit}); ` +
    `nothing was copied or removed. If that is intended, give max_delete: ${removing} or more (on the sync, or in the schedule's action); ` +
    'the same sync retried stops here again'
  );
}

/**
 * The hash kinds both providers' listings report (each store's declaration, src/stores/*\/declaration.ts),
 * so that a sync compares by checksum with no request per object; empty when a checksum compare is
 * impossible, and refused when the sync is accepted (docs/api.md, "Sync", its table).
 */
export function commonListingHashes(a: Provider, b: Provider): HashKind[] {
  const theirs = listingHashes(b);
  return listingHashes(a).filter((kind) => theirs.includes(kind));
}

/** One object of a sync's plan. */
export interface SyncPlanned {
  /** Relative to the prefixes (a source's key, or a destination's for a deletion). */
  key: string;
  size: number | null;
  etag: string | null;
  /** A copy's: the hashes the source's listing reported, which its first attempt checks (Entry.hashes). */
  hashes?: NonNullable<Entry['hashes']>;
  /** pending: to copy (or, with `work`, to delete); skipped: equal already, with `reason`. */
  status: 'pending' | 'skipped';
  reason?: string;
  /** A copy of a key the destination lacks: it will create the object (an undo removes it again). */
  created?: true;
  /** JSON of the deletion's work (ObjectWork op delete); absent for a copy. */
  work?: string;
  /** Held back until planned (the copies of a sync with delete) or until the copies settled (deletions). */
  held?: Held;
}

/** A destination object as its listing gave it, held while the source streams past. */
export interface Listed {
  size: number;
  etag: string | undefined;
  modTime: number | undefined;
  hashes: Entry['hashes'];
}

/**
 * How every reason of an object skipped as equal begins: the failures list leaves those out (they did
 * what was asked), and shows the objects left alone for another reason (src/domain/transfers/views.ts).
 */
export const EQUAL_PREFIX = 'equal ';

/** Whether the destination's object holds the source's, by `compare`; the reason when it does. */
export function equalBy(compare: CompareMode, source: Entry, destination: Listed): string | undefined {
  if (source.size !== destination.size) return undefined;
  switch (compare) {
    case 'size':
      return `${EQUAL_PREFIX}by size`;
    case 'size-modtime': {
      const from = source.modTime?.getTime();
      const to = destination.modTime;
      // Not older than the source: a copy written after the source was is the source's content.
      return from !== undefined && to !== undefined && to >= from
        ? `${EQUAL_PREFIX}by size-modtime`
        : undefined;
    }
    case 'checksum': {
      for (const [kind, value] of Object.entries(source.hashes ?? {})) {
        if (value !== undefined && destination.hashes?.[kind as HashKind] === value)
          return `${EQUAL_PREFIX}by checksum (${kind})`;
      }
      return undefined;
    }
  }
}

/** The folder a prefix names, as store.list takes it. */
function folderOf(prefix: string): string {
  return prefix.slice(0, -1);
}

/** What a sync compares: its prefixes, resolved to location ids, and its options. */
export interface SyncSpec {
  source: ObjectRef;
  destination: ObjectRef;
  options: JobOptions;
}

/**
 * A sync's diff, streamed; throws (a lasting error) past the limits of docs/api.md, "Sync". `open` is the
 * engine's store cache for a job, or the API's own for a dry run (src/domain/plans).
 */
export async function* syncObjects(
  open: OpenStore,
  { source, destination, options }: SyncSpec,
  signal?: AbortSignal,
): AsyncGenerator<SyncPlanned> {
  const compare = options.compare ?? 'size-modtime';
  const remove = options.delete === true;
  const filter = compileFilter(options.filter);
  const existing = await listDestination(open, destination, filter, signal);
  const destinationObjects = existing.size;
  const maxDelete = options.max_delete ?? defaultMaxDelete(destinationObjects);
  // With deletions, nothing may change before their count is known to be within max_delete.
  const hold: Partial<Pick<SyncPlanned, 'held'>> = remove ? { held: 'until-planned' } : {};
  for await (const { key, entry, there } of pairListings(open, source, existing, filter, signal)) {
    const reason = there === undefined ? undefined : equalBy(compare, entry, there);
    const planned: SyncPlanned = {
      key,
      size: entry.size,
      etag: entry.etag ?? null,
      ...(entry.hashes === undefined ? {} : { hashes: entry.hashes }),
      status: reason === undefined ? 'pending' : 'skipped',
      ...(reason === undefined ? hold : { reason }),
      ...(there === undefined ? { created: true as const } : {}),
    };
    yield planned;
  }
  if (!remove || existing.size === 0) return;
  if (existing.size > maxDelete) {
    throw new FerryError('conflict', overMaxDelete(existing.size, destinationObjects, options.max_delete));
  }
  for (const [key, there] of existing) {
    const work: ObjectWork = {
      op: 'delete',
      target: { location_id: destination.location_id, path: destination.path + key },
      // Kept there first (docs/api.md, "Undo").
      ...(options.backup === undefined ? {} : { backup: backupOf(options.backup, key) }),
    };
    // The destination object's size and ETag as listed: a plan's run leaves it alone if it changed.
    yield {
      key,
      size: there.size,
      etag: there.etag ?? null,
      status: 'pending',
      work: objectWork.encode(work),
      held: 'until-copied',
    };
  }
}

/** One source object, keyed relative to the prefixes, and the destination's object of that key if listed. */
export interface Paired {
  key: string;
  entry: Entry;
  there: Listed | undefined;
}

/**
 * The source prefix listed (through `filter`), each object paired with `existing`'s of its key, which is
 * taken out of the map: once the listing ends, `existing` holds what the destination has and the source
 * lacks. The source streams; only the destination's listing is held.
 */
export async function* pairListings(
  open: OpenStore,
  source: ObjectRef,
  existing: Map<string, Listed>,
  filter: ReturnType<typeof compileFilter>,
  signal: AbortSignal | undefined,
): AsyncGenerator<Paired> {
  const { store, release } = await open(source.location_id);
  try {
    for await (const entry of listFiltered(store, folderOf(source.path), {
      recursive: true,
      filter,
      signal,
    })) {
      const key = entry.path.slice(source.path.length);
      const there = existing.get(key);
      existing.delete(key);
      yield { key, entry, there };
    }
  } finally {
    await release();
  }
}

/**
 * The destination prefix listed (through `filter`), keyed relative to it; a prefix that does not exist
 * holds nothing. `what` names the job in the refusal past SYNC_MAX_DESTINATION objects.
 */
export async function listDestination(
  open: OpenStore,
  destination: ObjectRef,
  filter: ReturnType<typeof compileFilter>,
  signal: AbortSignal | undefined,
  what = 'a sync',
): Promise<Map<string, Listed>> {
  const listed = new Map<string, Listed>();
  const { store, release } = await open(destination.location_id);
  try {
    for await (const entry of listFiltered(store, folderOf(destination.path), {
      recursive: true,
      filter,
      signal,
    })) {
      if (listed.size >= SYNC_MAX_DESTINATION) {
        throw new FerryError(
          'invalid',
          `the destination prefix holds more than ${SYNC_MAX_DESTINATION} objects (passing the filter); ${what} compares at most that many`,
        );
      }
      listed.set(entry.path.slice(destination.path.length), {
        size: entry.size,
        etag: entry.etag,
        modTime: entry.modTime?.getTime(),
        hashes: entry.hashes,
      });
    }
  } catch (err) {
    // A destination prefix that does not exist yet holds nothing: the first sync creates it. On a
    // bucket store a missing bucket is the same answer from the listing, and the copies will say so.
    if (!isFerryError(err, 'not_found') || listed.size > 0) throw err;
  } finally {
    await release();
  }
  return listed;
}
