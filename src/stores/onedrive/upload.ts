// OneDrive uploads: a simple PUT …/content up to 4 MiB, an upload session above it
// (https://learn.microsoft.com/graph/api/driveitem-createuploadsession): fragments that are multiples
// of 320 KiB, sent in order with Content-Range "bytes a-b/total" to the session's uploadUrl WITHOUT
// the Authorization header (the URL is pre-authenticated; the token would be refused there).
//
// Graph needs the total size in every fragment's Content-Range, so a stream of unknown length that
// turns out larger than 4 MiB is spooled to a temporary file first (bounded memory; rclone's
// operations layer does the same for backends without streaming uploads).
//
// The bytes sent (after any spooling: what went on the wire) are hashed as they go (SentHashes), for
// the store to compare with the quickXorHash Graph answers; Graph takes no checksum with an upload.
import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { FerryError, invalid, isFerryError } from '../../errors.js';
import type { WriteOptions } from '../contract.js';
import { oneRequestOrParts, PartReader, uploadParts } from '../shared/chunks.js';
import { readText } from '../shared/http.js';
import { parentAndName, splitPath } from '../shared/paths.js';
import type { SentHashes } from '../shared/proof.js';
import type { DriveItem, GraphApi } from './client.js';

/** Fragments other than the last must be multiples of 320 KiB. */
export const FRAGMENT_GRANULE = 320 * 1024;
export const FRAGMENT_MAX = 60 * 1024 * 1024;
/** Simple uploads are for files of at most 4 MiB. */
export const SIMPLE_UPLOAD_MAX = 4 * 1024 * 1024;

export interface UploadSettings {
  chunkSize: number;
}

async function simpleUpload(
  api: GraphApi,
  path: string,
  data: Buffer,
  options: WriteOptions,
  sent: SentHashes,
): Promise<DriveItem> {
  await sent.update(data);
  const item = await orMakeParents(api, path, options.signal, () =>
    api.http.json<DriveItem>({
      method: 'PUT',
      url: api.pathUrl(path, 'content'),
      query: { '@microsoft.graph.conflictBehavior': 'replace' },
      headers: { 'content-type': options.mimeType ?? 'application/octet-stream' },
      body: data,
      signal: options.signal,
      operation: `upload ${path}`,
    }),
  );
  options.onProgress?.(data.length);
  return item;
}

async function session(
  api: GraphApi,
  path: string,
  reader: PartReader,
  size: number,
  settings: UploadSettings,
  options: WriteOptions,
  sent: SentHashes,
): Promise<DriveItem> {
  const created = await orMakeParents(api, path, options.signal, () =>
    api.http.json<{ uploadUrl?: string }>({
      method: 'POST',
      url: api.pathUrl(path, 'createUploadSession'),
      json: { item: { '@microsoft.graph.conflictBehavior': 'replace' } },
      signal: options.signal,
      operation: `create upload session ${path}`,
    }),
  );
  const uploadUrl = created.uploadUrl;
  if (!uploadUrl) throw new FerryError('transient', `onedrive: create upload session ${path}: no uploadUrl`);
  let result: DriveItem | undefined;
  try {
    await uploadParts({
      reader,
      partSize: settings.chunkSize,
      concurrency: 1, // the session takes its fragments in order
      signal: options.signal,
      onProgress: options.onProgress,
      uploadPart: (part) =>
        sent.during(part.data, async () => {
          const end = part.offset + part.data.length;
          const last = await reader.atEnd(); // one stream chunk of read-ahead; parts go one at a time
          if (last && end !== size)
            throw invalid(`the body was ${end} bytes, not its declared size of ${size}`);
          if (!last && end >= size)
            throw invalid(`the body is longer than its declared size of ${size} bytes`);
          const res = await api.http.send({
            method: 'PUT',
            url: uploadUrl,
            anonymous: true,
            headers: { 'content-range': `bytes ${part.offset}-${end - 1}/${size}` },
            body: part.data,
            signal: options.signal,
            operation: `upload fragment ${path}`,
          });
          const text = await readText(res.body, Number.POSITIVE_INFINITY);
          if (last) result = text === '' ? undefined : (JSON.parse(text) as DriveItem);
        }),
    });
  } catch (err) {
    // Deleting the session drops the fragments; nothing appears at the path.
    await api.http
      .discard({
        method: 'DELETE',
        url: uploadUrl,
        anonymous: true,
        operation: `cancel upload session ${path}`,
      })
      .catch(() => undefined);
    throw err;
  }
  if (!result)
    throw new FerryError('transient', `onedrive: upload ${path}: the last fragment got no item back`);
  return result;
}

/** Writes the rest of `reader` (after `first`) to a temporary file; resolves with its path and size. */
async function spool(
  first: Buffer,
  reader: PartReader,
): Promise<{ dir: string; file: string; size: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-onedrive-'));
  const file = join(dir, 'body');
  const handle = await open(file, 'w', 0o600);
  let size = 0;
  try {
    for (let chunk = first; chunk.length > 0; chunk = await reader.read(1024 * 1024)) {
      await handle.write(chunk);
      size += chunk.length;
    }
  } catch (err) {
    await handle.close();
    await rm(dir, { recursive: true, force: true });
    throw err;
  } finally {
    await handle.close().catch(() => undefined);
  }
  return { dir, file, size };
}

/**
 * Makes the folders above `path` one by one (409 nameAlreadyExists means it is there). Graph makes
 * missing parents itself on path uploads; this is for drives that answer itemNotFound instead.
 */
async function ensureParents(api: GraphApi, path: string, signal: AbortSignal | undefined): Promise<void> {
  const segments = splitPath(parentAndName(path).parent);
  for (let i = 0; i < segments.length; i++) {
    try {
      await api.createFolder(segments.slice(0, i).join('/'), segments[i] as string, signal);
    } catch (err) {
      if (!isFerryError(err, 'conflict')) throw err; // nameAlreadyExists: it is there
    }
  }
}

/**
 * Runs the call that creates the file (simple PUT or createUploadSession); when it answers
 * itemNotFound because the parent folder is missing, makes the folders and runs it once more.
 */
async function orMakeParents<T>(
  api: GraphApi,
  path: string,
  signal: AbortSignal | undefined,
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (!isFerryError(err, 'not_found') || !path.includes('/')) throw err;
    await ensureParents(api, path, signal);
    return call();
  }
}

/**
 * Uploads a body to `path`, replacing what is there, adding every byte sent to `sent`; resolves with
 * the item Graph reports.
 */
export async function uploadFile(
  api: GraphApi,
  path: string,
  body: Readable,
  settings: UploadSettings,
  options: WriteOptions,
  sent: SentHashes,
): Promise<DriveItem> {
  const reader = new PartReader(body, options.size);
  const { size } = options;
  return oneRequestOrParts(
    reader,
    size,
    SIMPLE_UPLOAD_MAX,
    (bytes) => simpleUpload(api, path, bytes, options, sent),
    async (first) => {
      if (first === undefined && size !== undefined)
        return session(api, path, reader, size, settings, options, sent);
      // A session needs the total size first: a body of unknown length waits on disk.
      const spooled = await spool(first ?? Buffer.alloc(0), reader);
      try {
        const fromDisk = new PartReader(createReadStream(spooled.file), spooled.size);
        return await session(api, path, fromDisk, spooled.size, settings, options, sent);
      } finally {
        await rm(spooled.dir, { recursive: true, force: true });
      }
    },
  );
}
