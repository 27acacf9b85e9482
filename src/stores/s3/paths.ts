// "bucket/key" paths of the S3 family (contract glossary): the first segment is the bucket, the rest
// is the object key, used verbatim as exact bytes.
import { FerryError } from '../../errors.js';
import { type BucketPath, splitBucketPath } from '../shared/bucket-paths.js';

export type S3Path = BucketPath;

/** A path naming an object ("bucket/key"), or with `allowBucket` also a bucket alone. */
export function splitPath(path: string, options: { allowBucket?: boolean } = {}): S3Path {
  const { bucket, key } = splitBucketPath(path);
  if (bucket === '') throw new FerryError('invalid', `"${path}" does not name a bucket`);
  if (key === '' && !options.allowBucket) {
    throw new FerryError('invalid', `"${path}" names a bucket, not an object`);
  }
  return { bucket, key };
}

/**
 * The x-amz-copy-source value: "bucket/key", URL-encoded, "/" kept. The SDK sends CopySource as given,
 * and S3 decodes it, so a key with "+", "%", "#", "?" or spaces must be encoded here.
 */
export function copySource({ bucket, key }: S3Path): string {
  const encode = (s: string) =>
    encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${encode(bucket)}/${key.split('/').map(encode).join('/')}`;
}
