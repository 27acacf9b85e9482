// Location paths on the gcs store: "bucket/object name" (shared/bucket-paths.ts). The object name is
// used verbatim (exact bytes); the storage library percent-encodes it into the URL.
import { type BucketPath, objectPath as bucketObjectPath, folderPath } from '../shared/bucket-paths.js';

export type ObjectPath = BucketPath;

/** Splits "bucket/a/b.txt". Throws invalid for paths with a leading or trailing "/". */
export function splitPath(path: string): ObjectPath {
  return folderPath('gcs', path);
}

/** Splits a path that must name an object (a bucket and a non-empty object name). */
export function objectPath(path: string): ObjectPath {
  return bucketObjectPath('gcs', path, 'an object (bucket/name)');
}
