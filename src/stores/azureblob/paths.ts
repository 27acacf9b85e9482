// Location paths on the azureblob store: "container/blob name". The blob name is used verbatim (exact
// bytes); the SDK escapes it into the URL.
import { invalid } from '../../errors.js';

export interface BlobPath {
  container: string;
  /** The blob name or folder prefix inside the container; "" for the container itself. */
  key: string;
}

/** Splits "container/a/b.txt". Throws invalid for paths with a leading or trailing "/". */
export function splitPath(path: string): BlobPath {
  if (path.startsWith('/') || path.endsWith('/')) {
    throw invalid(`azureblob: path "${path}" must not start or end with "/"`);
  }
  const slash = path.indexOf('/');
  if (slash < 0) return { container: path, key: '' };
  return { container: path.slice(0, slash), key: path.slice(slash + 1) };
}

/**
 * Splits a path that must name a blob (a container and a non-empty blob name). Azure Storage turns
 * "\" in a blob's URL into "/", so such a name would be stored under another name: refused instead
 * (paths are exact bytes, never normalised).
 */
export function objectPath(path: string): BlobPath {
  const parts = splitPath(path);
  if (parts.container === '' || parts.key === '') {
    throw invalid(`azureblob: "${path}" does not name a blob (container/name)`);
  }
  if (parts.key.includes('\\')) {
    throw invalid(`azureblob: blob names cannot hold "\\": Azure Storage stores it as "/" ("${path}")`);
  }
  return parts;
}

export function lastSegment(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? path : path.slice(slash + 1);
}
