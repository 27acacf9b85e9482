// Writes an object from a stream with bounded memory. A body that fits in one chunk goes up as one
// multipart request; a longer one through a resumable upload session in chunks (multiples of
// 256 KiB, one at a time, as the protocol requires). The session is opened first with the store's
// credentials; the chunks then go to the session URI, which authorizes them by itself. Nothing is
// finalized until the body has ended at its declared size, so a failed write leaves no object behind.
//
// Every write is proven (docs/api.md, "What a write proves"): the CRC32C and MD5 of the bytes sent are
// computed on the hashing thread (the library's own validation would compute them on the event loop,
// so it is off) and compared with the object GCS answers with. A single request declares both in its
// metadata first, so GCS itself refuses a body changed on the way; a resumable upload's hashes are
// known only after its last chunk went out, so a mismatch there deletes the object it made.
// https://cloud.google.com/storage/docs/uploads-downloads#uploads
// https://cloud.google.com/storage/docs/performing-resumable-uploads#chunked-upload
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { File } from '@google-cloud/storage';
import { invalid } from '../../errors.js';
import type { HashKind, UploadLimits, WriteOptions } from '../contract.js';
import { PartReader } from '../shared/chunks.js';
import { SentHashes } from '../shared/proof.js';

/** Chunks of a resumable upload (but the last) must be multiples of this. */
export const CHUNK_GRANULE = 256 * 1024;
/** The largest object GCS stores. */
export const MAX_OBJECT_SIZE = 5 * 1024 ** 4;

export interface UploadTuning {
  /** Chunk size of resumable uploads, and the largest body sent in one request. */
  chunkSize: number;
}

export function uploadLimits(tuning: UploadTuning): UploadLimits {
  return {
    minPartSize: tuning.chunkSize,
    maxPartSize: MAX_OBJECT_SIZE,
    maxParts: Math.ceil(MAX_OBJECT_SIZE / tuning.chunkSize),
    singleRequestMax: tuning.chunkSize,
  };
}

export function checkTuning(tuning: UploadTuning): void {
  if (tuning.chunkSize <= 0 || tuning.chunkSize % CHUNK_GRANULE !== 0) {
    throw invalid(`gcs: the upload chunk size must be a multiple of ${CHUNK_GRANULE} bytes`);
  }
}

/** The hashes GCS reports for every uploaded object, lower-case hex (objectInfo in index.ts). */
export type ReportedHashes = (metadata: unknown) => Partial<Record<HashKind, string>>;

/** Uploads the body; answers the hash kinds proven against the object GCS stored. */
export async function uploadObject(
  file: File,
  path: string,
  body: Readable,
  options: WriteOptions,
  tuning: UploadTuning,
  reported: ReportedHashes,
): Promise<HashKind[]> {
  if (options.size !== undefined && options.size > MAX_OBJECT_SIZE) {
    throw invalid(`gcs: ${options.size} bytes is more than an object can hold`);
  }
  const metadata = options.mimeType ? { contentType: options.mimeType } : {};
  const sent = new SentHashes('gcs', ['crc32c', 'md5']);
  try {
    const reader = new PartReader(body, options.size);
    const first = await reader.read(tuning.chunkSize);
    if (await reader.atEnd()) {
      reader.assertComplete();
      await sent.update(first);
      const digests = await sent.digests();
      // https://cloud.google.com/storage/docs/json_api/v1/objects/insert: crc32c and md5Hash in the
      // metadata, base64 of their big-endian bytes, are checked by GCS against the media it received.
      const declared = {
        crc32c: Buffer.from(digests.get('crc32c') ?? '', 'hex').toString('base64'),
        md5Hash: Buffer.from(digests.get('md5') ?? '', 'hex').toString('base64'),
      };
      await file.save(first, { resumable: false, metadata: { ...metadata, ...declared }, validation: false });
      options.onProgress?.(first.length);
      return await sent.check(path, reported(file.metadata));
    }

    const [uri] = await file.createResumableUpload({ metadata });
    const upload = file.createWriteStream({
      uri,
      // A new session has nothing yet: no need to ask for its offset first.
      offset: 0,
      resumable: true,
      chunkSize: tuning.chunkSize,
      metadata,
      validation: false,
    });
    let progressed = 0;
    upload.on('progress', (event: { bytesWritten?: number }) => {
      // bytesWritten counts what went into requests; the last report comes after the final answer.
      const done = Math.max(0, (event.bytesWritten ?? 0) - tuning.chunkSize);
      if (done > progressed) {
        progressed = done;
        options.onProgress?.(done);
      }
    });
    async function* parts(): AsyncGenerator<Buffer> {
      await sent.update(first);
      yield first;
      for (;;) {
        const part = await reader.read(tuning.chunkSize);
        if (part.length === 0) break;
        await sent.update(part);
        yield part;
      }
      // A body shorter than declared fails here, before the library sends the final chunk.
      reader.assertComplete();
    }
    const source = Readable.from(parts());
    await (options.signal ? pipeline(source, upload, { signal: options.signal }) : pipeline(source, upload));
    const size = reader.bytesRead;
    if (size > progressed) options.onProgress?.(size);
    try {
      return await sent.check(path, reported(file.metadata));
    } catch (err) {
      // The object holds bytes that are not the source's: it must not stay as if written. Only the
      // generation this upload made is deleted, never a later writer's.
      const generation = (file.metadata as { generation?: string | number }).generation;
      await file
        .delete(generation === undefined ? {} : { ifGenerationMatch: generation })
        .catch(() => undefined);
      throw err;
    }
  } finally {
    sent.discard();
  }
}
