// Writing on Box.
// - Up to `singleRequestMax` (Box: chunked uploads are for files of 20 MB and more): one multipart
//   request, POST /files/content ("Upload file"); when the name is taken (409 item_name_in_use) the
//   taken file gets a new version, POST /files/{id}/content ("Upload file version"). The body is
//   buffered (at most singleRequestMax) so it can be sent the second time.
// - Larger: a chunked upload ("Chunked uploads", https://developer.box.com/guides/uploads/chunked/):
//   create the session with the total size (POST /files/upload_sessions, or POST
//   /files/{id}/upload_sessions for a new version), PUT each part with Content-Range and
//   Digest: sha=<base64 SHA-1>, then commit with the part list and the whole file's Digest. Box fixes
//   the part size per session; parts upload `concurrency` at a time. A failed session is aborted.
// - Box needs the total size before the first part: a body of unknown length above singleRequestMax
//   is spooled to a temporary file first (disk, not memory).
// Every SHA-1 (the file's and each part's) is computed on the hashing thread over the bytes sent; the
// whole file's goes into `sent`, for the store to compare with the sha1 Box answers as well.
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { FerryError } from '../../errors.js';
import { parseRetryAfter } from '../../net/failures.js';
import type { WriteOptions } from '../contract.js';
import { PartReader, readAll, uploadParts } from '../shared/chunks.js';
import { ThreadedHash } from '../shared/hash-thread.js';
import { readText } from '../shared/http.js';
import type { SentHashes } from '../shared/proof.js';
import { spool } from '../shared/spool.js';
import { type BoxClient, type BoxItem, type BoxPart, type BoxUploadSession, ITEM_FIELDS } from './client.js';
import { conflictOf } from './errors.js';
import type { BoxResolver } from './resolve.js';

export interface BoxUploadTuning {
  singleRequestMax: number;
  concurrency: number;
  /** How many times a commit answered 202 ("parts still processing") is sent again. */
  commitPolls: number;
}

export async function uploadBox(
  client: BoxClient,
  resolver: BoxResolver,
  target: { path: string; parent: string; name: string },
  body: Readable,
  tuning: BoxUploadTuning,
  options: WriteOptions,
  sent: SentHashes,
): Promise<BoxItem> {
  const { signal } = options;
  const reader = new PartReader(body, options.size);
  const known = options.size;
  try {
    if (known !== undefined && known <= tuning.singleRequestMax) {
      return await single(client, resolver, target, await readAll(reader, known), options, sent);
    }
    if (known !== undefined) {
      return await chunked(client, resolver, target, reader, known, tuning, options, sent);
    }
    const head = await reader.read(tuning.singleRequestMax);
    if (await reader.atEnd()) return await single(client, resolver, target, head, options, sent);
    const spooled = await spool(head, reader, signal);
    try {
      const again = new PartReader(spooled.open(), spooled.size);
      return await chunked(client, resolver, target, again, spooled.size, tuning, options, sent);
    } finally {
      await spooled.release();
    }
  } catch (err) {
    await reader.cancel().catch(() => undefined);
    throw err;
  }
}

async function single(
  client: BoxClient,
  resolver: BoxResolver,
  { path, parent, name }: { path: string; parent: string; name: string },
  data: Buffer,
  options: WriteOptions,
  sent: SentHashes,
): Promise<BoxItem> {
  const { signal } = options;
  await sent.update(data);
  const sha1 = (await sent.digests()).get('sha1') ?? '';
  const file = await resolver.withFolder(parent, true, signal, async (folderId) => {
    try {
      return await client.uploadFile(
        '/files/content',
        { name, parent: { id: folderId } },
        data,
        sha1,
        `upload ${path}`,
        signal,
      );
    } catch (err) {
      const inTheWay = conflictOf(err);
      if (inTheWay?.type !== 'file') throw err;
      // `name` too, so a name taken in another letter case ends up spelled as asked.
      return client.uploadFile(
        `/files/${inTheWay.id}/content`,
        { name },
        data,
        sha1,
        `upload version ${path}`,
        signal,
      );
    }
  });
  options.onProgress?.(data.length);
  return file;
}

async function chunked(
  client: BoxClient,
  resolver: BoxResolver,
  { path, parent, name }: { path: string; parent: string; name: string },
  reader: PartReader,
  size: number,
  tuning: BoxUploadTuning,
  options: WriteOptions,
  sent: SentHashes,
): Promise<BoxItem> {
  const { signal } = options;
  const session = await resolver.withFolder(parent, true, signal, async (folderId) => {
    const create = (to: string, json: Record<string, unknown>) =>
      client.upload<BoxUploadSession>({
        method: 'POST',
        path: to,
        json,
        signal,
        operation: `upload session ${path}`,
      });
    try {
      return await create('/files/upload_sessions', {
        folder_id: folderId,
        file_size: size,
        file_name: name,
      });
    } catch (err) {
      const inTheWay = conflictOf(err);
      if (inTheWay?.type !== 'file') throw err;
      return create(`/files/${inTheWay.id}/upload_sessions`, { file_size: size, file_name: name });
    }
  });
  const sessionPath = `/files/upload_sessions/${encodeURIComponent(session.id)}`;
  const parts: BoxPart[] = [];
  try {
    await uploadParts({
      reader,
      partSize: session.part_size,
      concurrency: tuning.concurrency,
      signal,
      onProgress: options.onProgress,
      // during() starts at the part's start, so parts are hashed in order (uploadParts starts them in order).
      uploadPart: ({ index, offset, data }) =>
        sent.during(data, async () => {
          const own = new ThreadedHash('sha1');
          await own.update(data);
          const digest = (await own.digest()).toString('base64');
          const answer = await client.upload<{ part: BoxPart }>({
            method: 'PUT',
            path: sessionPath,
            headers: {
              'content-type': 'application/octet-stream',
              'content-range': `bytes ${offset}-${offset + data.length - 1}/${size}`,
              digest: `sha=${digest}`,
            },
            body: data,
            signal,
            operation: `upload part ${index + 1}/${session.total_parts} of ${path}`,
          });
          parts[index] = answer.part;
        }),
    });
    const whole = Buffer.from((await sent.digests()).get('sha1') ?? '', 'hex').toString('base64');
    return await commit(client, sessionPath, parts, whole, path, tuning, signal);
  } catch (err) {
    await client
      .upload({ method: 'DELETE', path: sessionPath, operation: `abort upload session ${path}` })
      .catch(() => undefined);
    throw err;
  }
}

/** Commit; 202 means Box is still processing parts and asks to commit again after Retry-After. */
async function commit(
  client: BoxClient,
  sessionPath: string,
  parts: BoxPart[],
  digest: string,
  path: string,
  tuning: BoxUploadTuning,
  signal: AbortSignal | undefined,
): Promise<BoxItem> {
  for (let poll = 0; ; poll++) {
    const res = await client.uploadRaw({
      method: 'POST',
      path: `${sessionPath}/commit`,
      query: { fields: ITEM_FIELDS },
      headers: { digest: `sha=${digest}` },
      json: { parts },
      accept: [202],
      signal,
      operation: `commit ${path}`,
    });
    const text = await readText(res.body, Number.POSITIVE_INFINITY);
    if (res.status !== 202) {
      const file = (JSON.parse(text) as { entries?: BoxItem[] }).entries?.[0];
      if (!file) throw new FerryError('transient', `box: commit ${path}: the answer holds no file`);
      return file;
    }
    if (poll >= tuning.commitPolls) {
      throw new FerryError(
        'transient',
        `box: commit ${path}: parts still processing after ${poll + 1} tries`,
      );
    }
    const seconds = Math.min(parseRetryAfter(res.headers['retry-after']) ?? 1, 30);
    await sleep(seconds * 1000, undefined, signal ? { signal } : {});
  }
}
