// What a verify compares (docs/api.md, "Verify"): the destination prefix is listed (filtered as the
// source is), then the source streams past it, by the listing merge a sync plans with
// (src/engine/sync-plan.ts: listDestination, pairListings), so a verify holds the same bound in memory.
// Each key is decided from the listings where they can tell: on one side only, sizes that differ, the
// size mode, or (checksum mode) a hash both listings report. The rest are planned as work (ObjectWork op
// verify), which a worker runs by stat'ing, and where no hash is common to both, reading and hashing
// (src/objects/object-verify.ts). Nothing is ever written.
import { objectWork } from '../durable/work.js';
import type { Found } from '../lifecycle/object-planning.js';
import type { ObjectWork } from '../lifecycle/specs.js';
import { compileFilter } from '../objects/filter.js';
import { checksumKind, checksumsAgree, comparedChecksums } from '../objects/verify.js';
import type { Entry } from '../stores/contract.js';
import type { OpenStore, Planned } from './planned.js';
import { type Listed, listDestination, pairListings, type SyncSpec } from './sync-plan.js';

/** A verify's prefixes, resolved to location ids, and its options (mode, filter), as a sync's. */
export type VerifySpec = SyncSpec;

function found(key: string, size: number, etag: string | undefined, what: Found): Planned {
  return { key, size, etag: etag ?? null, found: what };
}

/**
 * What the two listings tell of one key on both sides, or undefined when they cannot tell and the
 * objects must be stat'ed (and perhaps read).
 */
export function fromListings(mode: string, source: Entry, destination: Listed): Found | undefined {
  if (source.size !== destination.size) {
    return {
      verdict: 'differ',
      reason: `the sizes differ: ${source.size} bytes at the source, ${destination.size} at the destination`,
    };
  }
  if (mode === 'size') return { verdict: 'equal', reason: 'by size' };
  if (mode !== 'checksum') return undefined;
  const checksums = comparedChecksums({ hashes: source.hashes ?? {} }, { hashes: destination.hashes ?? {} });
  if (checksums === undefined) return undefined;
  return checksumsAgree(checksums)
    ? { verdict: 'equal', reason: `by checksum (${checksumKind(checksums.source)}, listed)`, checksums }
    : { verdict: 'differ', reason: `the ${checksumKind(checksums.source)} differs (listed)`, checksums };
}

/** A verify's objects as the planner commits them: decided ones settled, the rest with their work. */
export async function* verifyObjects(
  open: OpenStore,
  { source, destination, options }: VerifySpec,
  signal?: AbortSignal,
): AsyncGenerator<Planned> {
  const mode = options.mode ?? 'checksum';
  const filter = compileFilter(options.filter);
  const existing = await listDestination(open, destination, filter, signal, 'a verify');
  for await (const { key, entry, there } of pairListings(open, source, existing, filter, signal)) {
    if (there === undefined) {
      yield found(key, entry.size, entry.etag, {
        verdict: 'missing_in_destination',
        reason: 'not at the destination',
      });
      continue;
    }
    const decided = fromListings(mode, entry, there);
    if (decided !== undefined) {
      yield found(key, entry.size, entry.etag, decided);
      continue;
    }
    const work: ObjectWork = {
      op: 'verify',
      source: { location_id: source.location_id, path: source.path + key },
      destination: { location_id: destination.location_id, path: destination.path + key },
      mode,
    };
    yield { key, size: entry.size, etag: entry.etag ?? null, work: objectWork.encode(work) };
  }
  // What is left of the destination's listing, the source lacks.
  for (const [key, there] of existing) {
    yield found(key, there.size, there.etag, { verdict: 'missing_in_source', reason: 'not at the source' });
  }
}
