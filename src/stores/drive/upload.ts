// Drive uploads (https://developers.google.com/drive/api/guides/manage-uploads): a multipart upload
// (metadata + media in one multipart/related request) up to the single-request limit, a resumable
// upload above it, in chunks that are multiples of 256 KiB sent one after another with Content-Range;
// the server answers 308 Resume Incomplete with a Range header until the last byte. An existing file
// is updated in place (PATCH on /upload/drive/v3/files/{id}) so that writing a name twice never leaves
// two files of that name. The bytes sent are hashed (SentHashes) as they go, for the store to compare
// with the md5Checksum Drive answers; Drive takes no checksum with an upload to refuse a damaged one by.
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { FerryError, invalid } from '../../errors.js';
import type { WriteOptions } from '../contract.js';
import { oneRequestOrParts, PartReader, uploadParts } from '../shared/chunks.js';
import { readText } from '../shared/http.js';
import type { SentHashes } from '../shared/proof.js';
import { type DriveApi, type DriveFile, FILE_FIELDS } from './client.js';

/** Resumable chunks other than the last must be multiples of this. */
export const CHUNK_GRANULE = 256 * 1024;
/** Multipart uploads are for media of at most 5 MB; larger files go resumable. */
export const SINGLE_REQUEST_MAX = 5 * 1024 * 1024;

export interface UploadTarget {
  /** The file whose content is replaced; unset to create a new file. */
  existingId?: string;
  parentId: string;
  name: string;
  /** For messages. */
  path: string;
}

export interface UploadSettings {
  chunkSize: number;
  singleRequestMax: number;
}

function uploadUrl(api: DriveApi, target: UploadTarget): { method: 'POST' | 'PATCH'; url: string } {
  return target.existingId === undefined
    ? { method: 'POST', url: `${api.apiUrl}/upload/drive/v3/files` }
    : {
        method: 'PATCH',
        url: `${api.apiUrl}/upload/drive/v3/files/${encodeURIComponent(target.existingId)}`,
      };
}

function metadata(target: UploadTarget, mimeType: string | undefined): Record<string, unknown> {
  const meta: Record<string, unknown> =
    target.existingId === undefined ? { name: target.name, parents: [target.parentId] } : {};
  if (mimeType !== undefined) meta.mimeType = mimeType;
  return meta;
}

async function multipart(
  api: DriveApi,
  target: UploadTarget,
  data: Buffer,
  options: WriteOptions,
  sent: SentHashes,
): Promise<DriveFile> {
  await sent.update(data);
  const boundary = `ferry-${randomBytes(16).toString('hex')}`;
  const head =
    `--${boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n` +
    `${JSON.stringify(metadata(target, options.mimeType))}\r\n` +
    `--${boundary}\r\nContent-Type: ${options.mimeType ?? 'application/octet-stream'}\r\n\r\n`;
  const body = Buffer.concat([Buffer.from(head, 'utf8'), data, Buffer.from(`\r\n--${boundary}--\r\n`)]);
  const { method, url } = uploadUrl(api, target);
  const file = await api.http.json<DriveFile>({
    method,
    url,
    query: { uploadType: 'multipart', fields: FILE_FIELDS, supportsAllDrives: true },
    headers: { 'content-type': `multipart/related; boundary=${boundary}` },
    body,
    signal: options.signal,
    operation: `files.${target.existingId === undefined ? 'create' : 'update'} ${target.path}`,
  });
  options.onProgress?.(data.length);
  return file;
}

/** Opens a resumable session; its URI (the Location header) then takes the chunks. */
async function startSession(api: DriveApi, target: UploadTarget, options: WriteOptions): Promise<string> {
  const { method, url } = uploadUrl(api, target);
  const headers: Record<string, string> = {
    'x-upload-content-type': options.mimeType ?? 'application/octet-stream',
  };
  if (options.size !== undefined) headers['x-upload-content-length'] = String(options.size);
  const res = await api.http.discard({
    method,
    url,
    query: { uploadType: 'resumable', fields: FILE_FIELDS, supportsAllDrives: true },
    headers,
    json: metadata(target, options.mimeType),
    signal: options.signal,
    operation: `resumable upload start ${target.path}`,
  });
  const location = res.headers.location;
  const session = Array.isArray(location) ? location[0] : location;
  if (!session)
    throw new FerryError('transient', `drive: resumable upload start ${target.path}: no session URI`);
  return new URL(session, url).toString();
}

/** Bytes the server holds, from a 308's Range header ("bytes=0-n"); 0 when absent. */
function committed(range: string | string[] | undefined): number {
  const value = Array.isArray(range) ? range[0] : range;
  const m = value ? /bytes=0-(\d+)/.exec(value) : null;
  return m ? Number(m[1]) + 1 : 0;
}

/**
 * Sends bytes [offset, offset + data.length) of the file. The server may keep fewer than it was sent
 * (its 308 Range says how many); the rest is sent again from there, as the protocol asks.
 */
async function sendChunk(
  api: DriveApi,
  session: string,
  offset: number,
  data: Buffer,
  total: string,
  options: WriteOptions,
  path: string,
): Promise<DriveFile | undefined> {
  let sent = offset;
  const end = offset + data.length;
  for (;;) {
    const slice = data.subarray(sent - offset);
    const res = await api.http.send({
      method: 'PUT',
      url: session,
      headers: { 'content-range': `bytes ${sent}-${end - 1}/${total}` },
      body: slice,
      accept: [308],
      signal: options.signal,
      operation: `resumable upload ${path}`,
    });
    if (res.status !== 308) {
      const text = await readText(res.body, Number.POSITIVE_INFINITY);
      return text === '' ? undefined : (JSON.parse(text) as DriveFile);
    }
    res.body.resume();
    const kept = committed(res.headers.range);
    if (kept === end) return undefined;
    if (kept <= sent || kept > end) {
      throw new FerryError(
        'transient',
        `drive: resumable upload ${path}: the server kept ${kept} bytes, expected ${end}`,
      );
    }
    sent = kept;
  }
}

async function resumable(
  api: DriveApi,
  target: UploadTarget,
  reader: PartReader,
  first: Buffer | undefined,
  settings: UploadSettings,
  options: WriteOptions,
  sent: SentHashes,
): Promise<DriveFile> {
  const session = await startSession(api, target, options);
  const declared = options.size;
  let result: DriveFile | undefined;
  try {
    await uploadParts({
      reader,
      partSize: settings.chunkSize,
      concurrency: 1, // a resumable session takes its bytes in order
      ...(first ? { first } : {}),
      signal: options.signal,
      onProgress: options.onProgress,
      uploadPart: (part) =>
        sent.during(part.data, async () => {
          // Reading ahead by one stream chunk tells whether this is the last part, which must carry
          // the total; it is safe because parts are sent one at a time.
          const last = await reader.atEnd();
          const end = part.offset + part.data.length;
          if (declared !== undefined && last && end !== declared) {
            throw invalid(`the body was ${end} bytes, not its declared size of ${declared}`);
          }
          if (declared !== undefined && !last && end >= declared) {
            throw invalid(`the body is longer than its declared size of ${declared} bytes`);
          }
          if (!last && part.data.length % CHUNK_GRANULE !== 0) {
            throw new FerryError(
              'internal',
              `drive: chunk of ${part.data.length} bytes is not a multiple of 256 KiB`,
            );
          }
          const total = last ? String(end) : declared === undefined ? '*' : String(declared);
          const answer = await sendChunk(api, session, part.offset, part.data, total, options, target.path);
          if (last) result = answer;
        }),
    });
  } catch (err) {
    // Cancelling the session keeps a half-written file from ever appearing.
    await api.http
      .discard({
        method: 'DELETE',
        url: session,
        accept: [499],
        operation: `resumable upload cancel ${target.path}`,
      })
      .catch(() => undefined);
    throw err;
  }
  if (!result) throw new FerryError('transient', `drive: resumable upload ${target.path}: no final answer`);
  return result;
}

/**
 * Uploads a body to a new or existing file, adding every byte sent to `sent`; resolves with the file as
 * Drive reports it.
 */
export async function uploadFile(
  api: DriveApi,
  target: UploadTarget,
  body: Readable,
  settings: UploadSettings,
  options: WriteOptions,
  sent: SentHashes,
): Promise<DriveFile> {
  const reader = new PartReader(body, options.size);
  return oneRequestOrParts(
    reader,
    options.size,
    settings.singleRequestMax,
    (bytes) => multipart(api, target, bytes, options, sent),
    (first) => resumable(api, target, reader, first, settings, options, sent),
  );
}
