// Location paths on the azureblob store: "container/blob name" (shared/bucket-paths.ts, where the
// container is the bucket). The blob name is used verbatim (exact bytes); the SDK escapes it into the URL.
import { invalid } from '../../errors.js';
import { objectPath as bucketObjectPath, folderPath } from '../shared/bucket-paths.js';

export interface BlobPath {
  container: string;
  /** The blob name or folder prefix inside the container; "" for the container itself. */
  key: string;
}

/** Splits "container/a/b.txt". Throws invalid for paths with a leading or trailing "/". */
export function splitPath(path: string): BlobPath {
  const { bucket, key } = folderPath('azureblob', path);
  return { container: bucket, key };
}

/**
 * Splits a path that must name a blob (a container and a non-empty blob name). Azure Storage turns
 * "\" in a blob's URL into "/", so such a name would be stored under another name: refused instead
 * (paths are exact bytes, never normalised).
 */
export function objectPath(path: string): BlobPath {
  const { bucket, key } = bucketObjectPath('azureblob', path, 'a blob (container/name)');
  if (key.includes('\\')) {
    throw invalid(`azureblob: blob names cannot hold "\\": Azure Storage stores it as "/" ("${path}")`);
  }
  return { container: bucket, key };
}
