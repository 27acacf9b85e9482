// Location paths on folder stores (dropbox, drive, onedrive, box). A path is the contract's
// location-relative path: no leading or trailing "/", "" for the root, used verbatim as exact bytes.
// Nothing here normalises: a path that is not in that form is rejected, never repaired.
import { invalid } from '../../errors.js';

/** The segments of a path; [] for the root. Throws invalid for "/a", "a/", "a//b". */
export function splitPath(path: string): string[] {
  if (path === '') return [];
  const segments = path.split('/');
  if (segments.some((segment) => segment === '')) {
    throw invalid(`path "${path}" has an empty segment (leading, trailing or doubled "/")`);
  }
  return segments;
}

/** Joins a folder path and further segments or paths, skipping empty ones ("" is the root). */
export function joinPath(...parts: string[]): string {
  return parts.filter((part) => part !== '').join('/');
}

/** The parent folder path ("" for a top-level entry) and the last segment. Throws invalid for "". */
export function parentAndName(path: string): { parent: string; name: string } {
  const segments = splitPath(path);
  const name = segments.pop();
  if (name === undefined) throw invalid('the root folder is not an object');
  return { parent: segments.join('/'), name };
}

/** The last segment of a path ("" for the root). */
export function baseName(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? path : path.slice(slash + 1);
}
