// "bucket/key" paths of the bucket stores (s3 family, gcs, azureblob; a bucket is a container on
// azureblob): the first segment names the bucket, the rest is the object key or folder prefix, used
// verbatim as exact bytes. Nothing here normalises: a path that is not in that form is refused.
import { invalid } from '../../errors.js';

export interface BucketPath {
  bucket: string;
  /** The object key or folder prefix inside the bucket; "" for the bucket itself. */
  key: string;
}

/** Cuts a path at its first "/": "b" is {b, ""}, "b/a/c.txt" is {b, "a/c.txt"}. Checks nothing. */
export function splitBucketPath(path: string): BucketPath {
  const slash = path.indexOf('/');
  if (slash < 0) return { bucket: path, key: '' };
  return { bucket: path.slice(0, slash), key: path.slice(slash + 1) };
}

/** A bucket or folder path. `store` starts the message. Throws invalid for a leading or trailing "/". */
export function folderPath(store: string, path: string): BucketPath {
  if (path.startsWith('/') || path.endsWith('/')) {
    throw invalid(`${store}: path "${path}" must not start or end with "/"`);
  }
  return splitBucketPath(path);
}

/**
 * A path that must name an object: a bucket and a non-empty key. `object` says what one is in the
 * store's words, for the message ("an object (bucket/name)").
 */
export function objectPath(store: string, path: string, object: string): BucketPath {
  const parts = folderPath(store, path);
  if (parts.bucket === '' || parts.key === '') {
    throw invalid(`${store}: "${path}" does not name ${object}`);
  }
  return parts;
}
