// Server-side copy within one S3 account. Up to 5 GiB a single CopyObject does it; above that S3
// requires a multipart upload whose parts are UploadPartCopy ranges of the source
// (docs.aws.amazon.com/AmazonS3/latest/userguide/CopyingObjectsExamples.html). Move is not declared:
// S3 has no rename, and copy + verify + delete belongs to the operations layer.
import type { HeadObjectCommandOutput, S3Client } from '@aws-sdk/client-s3';
import { FerryError } from '../../errors.js';
import { awsS3 } from '../shared/sdk.js';
import { abortable } from './client.js';
import { copySource, type S3Path } from './paths.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/** The largest object one CopyObject may copy. */
export const COPY_OBJECT_MAX = 5 * GiB;

export interface CopyPart {
  PartNumber: number;
  CopySourceRange: string;
}

/** The UploadPartCopy ranges for an object of `size` bytes: 512 MiB parts, grown to fit 10,000 parts. */
export function planCopyParts(size: number, preferredPart = 512 * MiB, maxParts = 10_000): CopyPart[] {
  const part = Math.max(preferredPart, Math.ceil(Math.ceil(size / maxParts) / MiB) * MiB);
  if (part > COPY_OBJECT_MAX)
    throw new FerryError('invalid', `an object of ${size} bytes is too large to copy`);
  const parts: CopyPart[] = [];
  for (let offset = 0, n = 1; offset < size; offset += part, n++) {
    const end = Math.min(offset + part, size) - 1;
    parts.push({ PartNumber: n, CopySourceRange: `bytes=${offset}-${end}` });
  }
  return parts;
}

/** What the provider answered for a finished copy: the new object's ETag, when it gave one. */
export interface CopyAnswer {
  etag?: string;
  lastModified?: Date;
  serverSideEncryption?: string;
}

/**
 * Copies `from` to `to` given what is known of the source (a HEAD answer, or the size and ETag a
 * listing reported). With an ETag the copy is pinned to that version of the source
 * (x-amz-copy-source-if-match): a source that changed since fails with 412 instead of being copied.
 * Errors are the SDK's own; the caller maps them. A failed multipart copy is aborted so no parts are
 * left behind.
 */
export async function copyObject(
  client: Pick<S3Client, 'send'>,
  from: S3Path,
  to: S3Path,
  source: Pick<HeadObjectCommandOutput, 'ContentLength' | 'ContentType' | 'ETag'>,
  signal?: AbortSignal,
  concurrency = 4,
): Promise<CopyAnswer> {
  const {
    AbortMultipartUploadCommand,
    CompleteMultipartUploadCommand,
    CopyObjectCommand,
    CreateMultipartUploadCommand,
    UploadPartCopyCommand,
  } = awsS3();
  const size = source.ContentLength ?? 0;
  const CopySource = copySource(from);
  const pinned = source.ETag ? { CopySourceIfMatch: source.ETag } : {};
  if (size <= COPY_OBJECT_MAX) {
    const answer = await client.send(
      new CopyObjectCommand({ Bucket: to.bucket, Key: to.key, CopySource, ...pinned }),
      abortable(signal),
    );
    const result = answer.CopyObjectResult;
    return {
      ...(result?.ETag ? { etag: result.ETag } : {}),
      ...(result?.LastModified ? { lastModified: result.LastModified } : {}),
      ...(answer.ServerSideEncryption ? { serverSideEncryption: answer.ServerSideEncryption } : {}),
    };
  }

  const created = await client.send(
    new CreateMultipartUploadCommand({
      Bucket: to.bucket,
      Key: to.key,
      ...(source.ContentType ? { ContentType: source.ContentType } : {}),
    }),
    abortable(signal),
  );
  const UploadId = created.UploadId;
  if (!UploadId) throw new FerryError('transient', 'the provider gave no upload id for a multipart copy');
  try {
    const plan = planCopyParts(size);
    const done: { PartNumber: number; ETag: string }[] = [];
    let next = 0;
    const worker = async () => {
      while (next < plan.length) {
        const part = plan[next++] as CopyPart;
        const answer = await client.send(
          new UploadPartCopyCommand({
            Bucket: to.bucket,
            Key: to.key,
            UploadId,
            PartNumber: part.PartNumber,
            CopySource,
            CopySourceRange: part.CopySourceRange,
            // The source must not change while its parts are copied.
            ...pinned,
          }),
          abortable(signal),
        );
        const etag = answer.CopyPartResult?.ETag;
        if (!etag)
          throw new FerryError('transient', `part ${part.PartNumber} of a multipart copy has no ETag`);
        done.push({ PartNumber: part.PartNumber, ETag: etag });
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, plan.length) }, worker));
    done.sort((a, b) => a.PartNumber - b.PartNumber);
    const completed = await client.send(
      new CompleteMultipartUploadCommand({
        Bucket: to.bucket,
        Key: to.key,
        UploadId,
        MultipartUpload: { Parts: done },
      }),
      abortable(signal),
    );
    return completed.ETag ? { etag: completed.ETag } : {};
  } catch (err) {
    await client
      .send(new AbortMultipartUploadCommand({ Bucket: to.bucket, Key: to.key, UploadId }))
      .catch(() => undefined);
    throw err;
  }
}
