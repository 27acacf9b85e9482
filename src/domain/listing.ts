// Object listing (docs/api.md, "Listing objects"): what a location holds under a path, streamed
// from the provider page by page so that memory does not grow with the number of entries.
import { invalid } from '../errors.js';
import { bucketWord, hasBuckets } from '../providers.js';
import type { Entry } from '../stores/contract.js';
import type { Caller } from './caller.js';
import type { LocationRef } from './locations/addressing.js';
import type { Locations } from './locations/locations.js';
import type { Storage } from './storage.js';

export interface Listing {
  /** Present when an empty path listed the buckets or containers. */
  hint?: string;
  entries: AsyncIterable<Entry>;
}

/**
 * The folder path as stores take it. A leading or trailing "/" is accepted and dropped (a folder is
 * the same folder either way); empty, "." and ".." segments are refused rather than guessed at.
 */
export function folderPath(path: string | undefined): string {
  if (path === undefined) return '';
  const trimmed = path.replace(/^\//, '').replace(/\/$/, '');
  if (trimmed === '') return '';
  for (const segment of trimmed.split('/')) {
    if (segment === '') throw invalid(`path "${path}" has an empty segment`);
    if (segment === '.' || segment === '..')
      throw invalid(`path "${path}" must not contain "${segment}" segments`);
  }
  return trimmed;
}

export async function listObjects(
  locations: Locations,
  storage: Storage,
  caller: Caller,
  request: { ref: LocationRef; path?: string; recurse?: boolean },
): Promise<Listing> {
  const path = folderPath(request.path);
  const row = await locations.resolve(caller, request.ref);
  const entries = await storage.list(row, path, request.recurse ?? false);
  const provider = row.provider;
  if (path === '' && hasBuckets(provider)) {
    const word = bucketWord(provider);
    return {
      hint: `the entries are ${word}s; send path "<${word}>" or "<${word}>/folder" to list what one holds`,
      entries,
    };
  }
  return { entries };
}
