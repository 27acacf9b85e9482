// Copy targets and their paths (docs/api.md, "Copy"). Paths are used as
// exact bytes and never normalised: these checks refuse what is ambiguous rather than repair it.
import { MANIFEST_MAX_KEYS } from '../../api/copy.js';
import { invalid } from '../../errors.js';
import { isUuid } from '../../ids.js';
import type { LocationRef } from '../locations/addressing.js';

export const MANIFEST_KEY_MAX_BYTES = 4096;

/** A target as the body gives it: `<location>:<path>`, or {name?, id?, path}. */
export type TargetInput = string | { name?: string; id?: string; path: string };

export interface Target {
  ref: LocationRef;
  path: string;
}

export function parseTarget(input: TargetInput, field: 'from' | 'to' | 'backup_to'): Target {
  if (typeof input === 'string') {
    const colon = input.indexOf(':');
    if (colon <= 0) {
      // `location/path` is the grammar of move, remove, pull, share and send: say so, rewritten.
      const slash = input.indexOf('/');
      const hint =
        colon < 0 && slash > 0
          ? ` (the "<location>/<path>" form is for move, remove, pull, share and send): did you mean "${input.slice(0, slash)}:${input.slice(slash + 1)}"?`
          : '';
      throw invalid(`${field} must be "<location>:<path>" or {name|id, path}${hint}`);
    }
    const location = input.slice(0, colon);
    const path = input.slice(colon + 1);
    return { ref: isUuid(location) ? { id: location } : { name: location }, path };
  }
  const { path, ...ref } = input;
  if (ref.name === undefined && ref.id === undefined) throw invalid(`${field} needs the location name or id`);
  return { ref, path };
}

function segments(path: string): string[] {
  return path.split('/');
}

/** The rules a single-object path and (slash-terminated) a bulk prefix share. */
function checkCommon(path: string, field: string): void {
  if (path === '') throw invalid(`${field} path must not be empty`);
  if (path.startsWith('/')) throw invalid(`${field} path must not start with "/"`);
  if (path.startsWith('-')) throw invalid(`${field} path must not start with "-"`);
  if (path.includes(':')) throw invalid(`${field} path must not contain ":"`);
  if (segments(path).includes('..')) throw invalid(`${field} path must not contain a ".." segment`);
}

/**
 * A single-object path: bucket/key on bucket stores, folder/…/file on folder stores. No leading or
 * trailing "/", no ":", no ".." segment, not starting with "-".
 */
export function checkObjectPath(path: string, field: string, bucketStore: boolean): void {
  checkCommon(path, field);
  if (path.endsWith('/'))
    throw invalid(`${field} path must not end with "/" (a trailing "/" makes a bulk prefix copy)`);
  if (bucketStore && segments(path).length < 2)
    throw invalid(`${field} path needs a bucket and a key: "bucket/key"`);
}

/** A bulk prefix: "bucket/" or "bucket/dir/…/", slash-terminated, otherwise as an object path. */
export function checkPrefix(path: string, field: string): void {
  checkCommon(path, field);
  if (!path.endsWith('/')) throw invalid(`${field} must end with "/" for a bulk copy`);
}

/** Manifest keys are relative to the source prefix (docs/api.md, "Copy"). Duplicates are refused, not merged. */
export function checkManifest(keys: readonly string[]): void {
  if (keys.length === 0) throw invalid('manifest must not be empty');
  if (keys.length > MANIFEST_MAX_KEYS)
    throw invalid(`manifest has ${keys.length} keys; at most ${MANIFEST_MAX_KEYS}`);
  const seen = new Set<string>();
  keys.forEach((key, i) => {
    const where = `manifest[${i}]`;
    if (key === '') throw invalid(`${where} is empty`);
    if (Buffer.byteLength(key, 'utf8') > MANIFEST_KEY_MAX_BYTES) {
      throw invalid(`${where} is longer than ${MANIFEST_KEY_MAX_BYTES} bytes`);
    }
    if (key.startsWith('/') || key.endsWith('/')) throw invalid(`${where} must not start or end with "/"`);
    if (segments(key).includes('..')) throw invalid(`${where} must not contain a ".." segment`);
    if (seen.has(key)) throw invalid(`${where} repeats the key "${key}"`);
    seen.add(key);
  });
}

/** True when one prefix contains the other (or they are equal). */
export function prefixesOverlap(a: string, b: string): boolean {
  return a.startsWith(b) || b.startsWith(a);
}
