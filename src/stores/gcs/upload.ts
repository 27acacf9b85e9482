// Writes an object from a stream with bounded memory. A body that fits in one chunk goes up as one
// multipart request; a longer one through a resumable upload session in chunks (multiples of
// 256 KiB, one at a time, as the protocol requires). The session is opened first with the store's
// credentials; the chunks then go to the session URI, which authorizes them by itself. The library
// checks the CRC32C of what it sent against what GCS stored. Nothing is finalized until the body has
// ended at its declared size, so a failed write leaves no object behind.
// https://cloud.google.com/storage/docs/uploads-downloads#uploads
// https://cloud.google.com/storage/docs/performing-resumable-uploads#chunked-upload
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { File } from '@google-cloud/storage';
import { invalid } from '../../errors.js';
import type { UploadLimits, WriteOptions } from '../contract.js';
import { PartReader } from '../shared/chunks.js';

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

export async function uploadObject(
  file: File,
  body: Readable,
  options: WriteOptions,
  tuning: UploadTuning,
): Promise<void> {
  if (options.size !== undefined && options.size > MAX_OBJECT_SIZE) {
    throw invalid(`gcs: ${options.size} bytes is more than an object can hold`);
  }
  const metadata = options.mimeType ? { contentType: options.mimeType } : {};
  const reader = new PartReader(body, options.size);
  const first = await reader.read(tuning.chunkSize);
  if (await reader.atEnd()) {
    reader.assertComplete();
    await file.save(first, { resumable: false, metadata, validation: 'crc32c' });
    options.onProgress?.(first.length);
    return;
  }

  const [uri] = await file.createResumableUpload({ metadata });
  const upload = file.createWriteStream({
    uri,
    // A new session has nothing yet: no need to ask for its offset first.
    offset: 0,
    resumable: true,
    chunkSize: tuning.chunkSize,
    metadata,
    validation: 'crc32c',
  });
  let reported = 0;
  upload.on('progress', (event: { bytesWritten?: number }) => {
    // bytesWritten counts what went into requests; the last report comes after the final answer.
    const done = Math.max(0, (event.bytesWritten ?? 0) - tuning.chunkSize);
    if (done > reported) {
      reported = done;
      options.onProgress?.(done);
    }
  });
  async function* parts(): AsyncGenerator<Buffer> {
    yield first;
    for (;;) {
      const part = await reader.read(tuning.chunkSize);
      if (part.length === 0) break;
      yield part;
    }
    // A body shorter than declared fails here, before the library sends the final chunk.
    reader.assertComplete();
  }
  const source = Readable.from(parts());
  await (options.signal ? pipeline(source, upload, { signal: options.signal }) : pipeline(source, upload));
  const size = reader.bytesRead;
  if (size > reported) options.onProgress?.(size);
}
