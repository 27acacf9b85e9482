// Location paths on the gcs store: "bucket/object name". The object name is used verbatim (exact
// bytes); the storage library percent-encodes it into the URL.
import { invalid } from '../../errors.js';

export interface ObjectPath {
  bucket: string;
  /** The object name or folder prefix inside the bucket; "" for the bucket itself. */
  key: string;
}

/** Splits "bucket/a/b.txt". Throws invalid for paths with a leading or trailing "/". */
export function splitPath(path: string): ObjectPath {
  if (path.startsWith('/') || path.endsWith('/')) {
    throw invalid(`gcs: path "${path}" must not start or end with "/"`);
  }
  const slash = path.indexOf('/');
  if (slash < 0) return { bucket: path, key: '' };
  return { bucket: path.slice(0, slash), key: path.slice(slash + 1) };
}

/** Splits a path that must name an object (a bucket and a non-empty object name). */
export function objectPath(path: string): ObjectPath {
  const parts = splitPath(path);
  if (parts.bucket === '' || parts.key === '') {
    throw invalid(`gcs: "${path}" does not name an object (bucket/name)`);
  }
  return parts;
}

export function lastSegment(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? path : path.slice(slash + 1);
}
