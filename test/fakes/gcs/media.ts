// The fake GCS's media routes: downloads (alt=media, with Range) and the three upload protocols
// (media, multipart, resumable sessions with Content-Range and 308 Resume Incomplete).
import type { ServerResponse } from 'node:http';
import { readBody, sendError, sendJson } from './http.js';
import { noSuchBucket, noSuchObject, type RouteContext } from './objects.js';
import { crc32cOf, md5Of, objectResource, type StoredObject } from './state.js';

/** Non-final chunks of a resumable upload must be multiples of this. */
export const CHUNK_GRANULE = 256 * 1024;

/**
 * GET /storage/v1/b/{bucket}/o/{object}?alt=media
 * https://cloud.google.com/storage/docs/json_api/v1/objects/get (alt=media) and
 * https://cloud.google.com/storage/docs/downloading-objects#download-object-portion (Range).
 * Headers: x-goog-hash (https://cloud.google.com/storage/docs/xml-api/reference-headers#xgooghash),
 * x-goog-stored-content-encoding, x-goog-generation.
 */
export function download(ctx: RouteContext, bucket: string, name: string): void {
  const objects = ctx.state.objectsOf(bucket);
  if (!objects) {
    noSuchBucket(ctx.res);
    return;
  }
  const found = objects.get(name);
  if (!found) {
    noSuchObject(ctx.res, bucket, name);
    return;
  }
  const size = found.data.length;
  const headers: Record<string, string> = {
    'content-type': found.contentType,
    'x-goog-hash': `crc32c=${found.crc32c},md5=${found.md5Hash}`,
    'x-goog-generation': String(found.generation),
    'x-goog-metageneration': '1',
    'x-goog-stored-content-encoding': 'identity',
    'x-goog-stored-content-length': String(size),
    'x-goog-storage-class': 'STANDARD',
    etag: `"${found.md5Hash}"`,
    'last-modified': found.updated.toUTCString(),
    'accept-ranges': 'bytes',
  };
  const range = ctx.req.headers.range;
  if (range === undefined) {
    ctx.res.writeHead(200, { ...headers, 'content-length': String(size) });
    ctx.res.end(found.data);
    return;
  }
  const slice = parseRange(range, size);
  if (!slice) {
    sendError(ctx.res, 416, 'requestedRangeNotSatisfiable', 'Request range not satisfiable', {
      'content-range': `bytes */${size}`,
    });
    return;
  }
  const [start, end] = slice;
  ctx.res.writeHead(206, {
    ...headers,
    'content-length': String(end - start + 1),
    'content-range': `bytes ${start}-${end}/${size}`,
  });
  ctx.res.end(found.data.subarray(start, end + 1));
}

/** [start, end] inclusive, clipped to the object; undefined when unsatisfiable (RFC 9110 14.1.2). */
function parseRange(header: string, size: number): [number, number] | undefined {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return size === 0 ? undefined : [0, size - 1];
  const [, first = '', last = ''] = match;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return undefined;
    return [Math.max(0, size - suffix), size - 1];
  }
  const start = Number(first);
  if (start >= size) return undefined;
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  return end < start ? undefined : [start, end];
}

/**
 * POST /upload/storage/v1/b/{bucket}/o?uploadType=media|multipart|resumable
 * https://cloud.google.com/storage/docs/json_api/v1/objects/insert ,
 * https://cloud.google.com/storage/docs/uploading-objects#uploading-an-object (single request),
 * https://cloud.google.com/storage/docs/json_api/v1/how-tos/multipart-upload ,
 * https://cloud.google.com/storage/docs/performing-resumable-uploads#initiate-session
 */
export async function insertUpload(ctx: RouteContext, bucket: string, origin: string): Promise<void> {
  const body = await readBody(ctx.req);
  if (!ctx.state.objectsOf(bucket)) {
    noSuchBucket(ctx.res);
    return;
  }
  const type = ctx.query.get('uploadType');
  if (type === 'media') {
    const name = ctx.query.get('name');
    if (!name) {
      sendError(ctx.res, 400, 'required', 'Required parameter: name');
      return;
    }
    const contentType = ctx.req.headers['content-type'] ?? 'application/octet-stream';
    return sendObject(ctx.res, ctx.state.put(bucket, name, ctx.tamper(body), contentType));
  }
  if (type === 'multipart') {
    const parts = parseMultipart(body, ctx.req.headers['content-type'] ?? '');
    if (parts?.length !== 2) {
      return sendError(
        ctx.res,
        400,
        'invalid',
        'Invalid multipart request: expected metadata and media parts.',
      );
    }
    const [meta, sent] = parts as [Part, Part];
    const media = { ...sent, body: ctx.tamper(sent.body) };
    const metadata = JSON.parse(meta.body.toString('utf8') || '{}') as {
      name?: string;
      contentType?: string;
      md5Hash?: string;
      crc32c?: string;
    };
    const name = ctx.query.get('name') ?? metadata.name;
    if (!name) {
      sendError(ctx.res, 400, 'required', 'Required parameter: name');
      return;
    }
    const contentType = metadata.contentType ?? media.contentType ?? 'application/octet-stream';
    const mismatch = hashMismatch(metadata, media.body);
    if (mismatch) {
      sendError(ctx.res, 400, 'invalid', mismatch);
      return;
    }
    return sendObject(ctx.res, ctx.state.put(bucket, name, media.body, contentType));
  }
  if (type === 'resumable') {
    const metadata = JSON.parse(body.toString('utf8') || '{}') as { name?: string; contentType?: string };
    const name = ctx.query.get('name') ?? metadata.name;
    if (!name) {
      sendError(ctx.res, 400, 'required', 'Required parameter: name');
      return;
    }
    const headerType = ctx.req.headers['x-upload-content-type'];
    const contentType =
      metadata.contentType ?? (typeof headerType === 'string' ? headerType : 'application/octet-stream');
    const session = ctx.state.newUpload(bucket, name, contentType);
    const location =
      `${origin}/upload/storage/v1/b/${encodeURIComponent(bucket)}/o?uploadType=resumable` +
      `&name=${encodeURIComponent(name)}&upload_id=${session.id}`;
    ctx.res.writeHead(200, { location, 'content-length': '0' });
    ctx.res.end();
    return;
  }
  sendError(ctx.res, 400, 'invalid', `Invalid upload type: ${type ?? ''}`);
}

/**
 * PUT {session URI} with Content-Range — https://cloud.google.com/storage/docs/performing-resumable-uploads
 * ("Upload the data", "Upload in multiple chunks", "Check the status of a resumable upload").
 * Chunks that are not the last must be multiples of 256 KiB; each answers 308 with the Range
 * received so far; the last (its total known and reached) creates the object. DELETE cancels (499).
 */
export async function resumableChunk(ctx: RouteContext, uploadId: string): Promise<void> {
  const body = await readBody(ctx.req);
  const session = ctx.state.uploads.get(uploadId);
  if (!session) {
    sendError(ctx.res, 404, 'notFound', 'No such upload session.');
    return;
  }
  if (ctx.req.method === 'DELETE') {
    ctx.state.uploads.delete(uploadId);
    ctx.res.writeHead(499, { 'content-length': '0' });
    ctx.res.end();
    return;
  }
  const header = ctx.req.headers['content-range'] ?? '';
  const match = /^bytes (?:(\d+)-(-?\d+)|\*)\/(\d+|\*)$/.exec(header);
  if (!match) {
    sendError(ctx.res, 400, 'invalid', `Failed to parse Content-Range header: ${header}`);
    return;
  }
  const [, first, , totalText = '*'] = match;
  const total = totalText === '*' ? undefined : Number(totalText);
  if (first !== undefined) {
    const start = Number(first);
    if (start > session.received) {
      return sendError(
        ctx.res,
        400,
        'invalid',
        `Invalid request. According to the Content-Range header, the upload offset is ${start} byte(s), which exceeds already uploaded size of ${session.received} byte(s).`,
      );
    }
    // Bytes the session already has are skipped (a client resending after a lost answer).
    const fresh = ctx.tamper(body.subarray(Math.min(body.length, session.received - start)));
    const final = total !== undefined && session.received + fresh.length >= total;
    if (!final && body.length % CHUNK_GRANULE !== 0) {
      return sendError(
        ctx.res,
        400,
        'invalid',
        `Invalid request. The number of bytes uploaded is required to be equal or greater than 262144, except for the final request (it's recommended to be the exact multiple of 262144). The received request contained ${body.length} bytes, which does not meet this requirement.`,
      );
    }
    session.chunks.push(fresh);
    session.received += fresh.length;
  }
  if (total === undefined || session.received < total) {
    const range = session.received > 0 ? { range: `bytes=0-${session.received - 1}` } : {};
    ctx.res.writeHead(308, { ...range, 'content-length': '0' });
    ctx.res.end();
    return;
  }
  if (session.received > total) {
    return sendError(ctx.res, 400, 'invalid', 'The uploaded data exceeds the declared object size.');
  }
  const data = Buffer.concat(session.chunks);
  const mismatch = hashMismatch(parseGoogHash(ctx.req.headers['x-goog-hash']), data);
  if (mismatch) {
    sendError(ctx.res, 400, 'invalid', mismatch);
    return;
  }
  ctx.state.uploads.delete(uploadId);
  sendObject(ctx.res, ctx.state.put(session.bucket, session.name, data, session.contentType));
}

function sendObject(res: ServerResponse, object: StoredObject): void {
  sendJson(res, 200, objectResource(object));
}

/** The error message GCS gives when a hash the client declared does not match the bytes. */
function hashMismatch(declared: { md5Hash?: string; crc32c?: string }, data: Buffer): string | undefined {
  if (declared.md5Hash && declared.md5Hash !== md5Of(data)) {
    return `Provided MD5 hash "${declared.md5Hash}" doesn't match calculated MD5 hash "${md5Of(data)}".`;
  }
  if (declared.crc32c && declared.crc32c !== crc32cOf(data)) {
    return `Provided CRC32C "${declared.crc32c}" doesn't match calculated CRC32C "${crc32cOf(data)}".`;
  }
  return undefined;
}

function parseGoogHash(header: string | string[] | undefined): { md5Hash?: string; crc32c?: string } {
  const out: { md5Hash?: string; crc32c?: string } = {};
  for (const pair of (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',')) {
    const eq = pair.indexOf('=');
    if (eq < 0) continue;
    const key = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    if (key === 'md5') out.md5Hash = value;
    if (key === 'crc32c') out.crc32c = value;
  }
  return out;
}

interface Part {
  contentType: string | undefined;
  body: Buffer;
}

/** multipart/related (RFC 2387): parts between "--boundary" lines, each with headers and a body. */
function parseMultipart(body: Buffer, contentType: string): Part[] | undefined {
  const match = /boundary="?([^";]+)"?/i.exec(contentType);
  if (!match) return undefined;
  const delimiter = Buffer.from(`--${match[1]}`);
  const parts: Part[] = [];
  let at = body.indexOf(delimiter);
  while (at >= 0) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, start);
    if (next < 0) return undefined;
    // The part runs from after the delimiter's CRLF to the CRLF before the next delimiter.
    const raw = body.subarray(start + 2, next - 2);
    const split = raw.indexOf('\r\n\r\n');
    if (split < 0) return undefined;
    const headers = raw.subarray(0, split).toString('utf8');
    const typeMatch = /^content-type:\s*(.+)$/im.exec(headers);
    parts.push({ contentType: typeMatch?.[1]?.trim(), body: raw.subarray(split + 4) });
    at = next;
  }
  return parts;
}
