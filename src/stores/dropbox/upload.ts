// Writing on Dropbox. Up to one part: files/upload in one request. Larger: an upload session
// (files/upload_session/start with the first part, append_v2 for each further part in order, finish
// with the commit), "Upload sessions" in https://www.dropbox.com/developers/documentation/http/documentation#files-upload_session-start.
// Sessions are sequential (not "concurrent"), so parts need not be multiples of 4 MiB and go one at a
// time: memory is one part. A failed session is simply abandoned (Dropbox expires it after 7 days);
// nothing is committed unless every byte arrived and the declared size matched.
//
// The bytes sent are hashed as they go (SentHashes, Dropbox's content hash) for the store to compare
// with the content_hash Dropbox answers. A single request declares its content_hash first, so Dropbox
// itself refuses a body changed on the way; session parts do not (each would need a hash of its own
// before it is sent, hashing every byte twice), and are proven by the answer alone.
import type { Readable } from 'node:stream';
import type { WriteOptions } from '../contract.js';
import { PartReader, uploadParts } from '../shared/chunks.js';
import type { SentHashes } from '../shared/proof.js';
import type { DropboxClient, FileMetadata } from './client.js';

export interface UploadTuning {
  /** Bytes per session part, and the largest object sent in one files/upload request. */
  partSize: number;
  maxParts: number;
}

export async function uploadDropbox(
  client: DropboxClient,
  path: string,
  dropboxPath: string,
  body: Readable,
  tuning: UploadTuning,
  options: WriteOptions,
  sent: SentHashes,
): Promise<FileMetadata> {
  const { signal } = options;
  // overwrite: write() replaces (contract); mute: no desktop notification for machine copies.
  const commit = {
    path: dropboxPath,
    mode: 'overwrite',
    autorename: false,
    mute: true,
    strict_conflict: false,
  };
  const reader = new PartReader(body, options.size);
  let head: Buffer;
  try {
    head = await reader.read(tuning.partSize);
    if (await reader.atEnd()) {
      reader.assertComplete();
      await sent.update(head);
      const contentHash = (await sent.digests()).get('dropbox');
      const arg = contentHash === undefined ? commit : { ...commit, content_hash: contentHash };
      const meta = await client.upload<FileMetadata>('files/upload', arg, head, path, signal);
      options.onProgress?.(head.length);
      return meta;
    }
  } catch (err) {
    await reader.cancel().catch(() => undefined);
    throw err;
  }

  let sessionId: string | undefined;
  const { size } = await uploadParts({
    reader,
    partSize: tuning.partSize,
    first: head,
    maxParts: tuning.maxParts,
    signal,
    onProgress: options.onProgress,
    uploadPart: ({ index, offset, data }) =>
      sent.during(data, async () => {
        if (index === 0) {
          const started = await client.upload<{ session_id: string }>(
            'files/upload_session/start',
            { close: false },
            data,
            path,
            signal,
          );
          sessionId = started.session_id;
        } else {
          await client.upload<null>(
            'files/upload_session/append_v2',
            { cursor: { session_id: sessionId, offset }, close: false },
            data,
            path,
            signal,
          );
        }
      }),
  });
  return client.upload<FileMetadata>(
    'files/upload_session/finish',
    { cursor: { session_id: sessionId, offset: size }, commit },
    Buffer.alloc(0),
    path,
    signal,
  );
}
