// Upload routes of the fake Drive: /upload/drive/v3/files with uploadType=media, multipart or
// resumable, POST to create and PATCH /upload/drive/v3/files/{fileId} to replace content.
// Reference: https://developers.google.com/drive/api/guides/manage-uploads
import { randomBytes } from 'node:crypto';
import { moveParents } from './files.js';
import { FILE_DEFAULT_FIELDS, notFound, type RouteContext, sendError, sendResource } from './http.js';
import { type DriveFile, FOLDER_MIME, type ResumableSession, toResource } from './state.js';

/** Simple and multipart uploads take at most 5 MB of media; larger files must go resumable. */
export const SINGLE_REQUEST_LIMIT = 5 * 1024 * 1024;
/** Resumable chunks other than the last must be multiples of 256 KiB. */
export const CHUNK_GRANULARITY = 256 * 1024;

interface Part {
  headers: Record<string, string>;
  body: Buffer;
}

function parseMultipart(body: Buffer, contentType: string): Part[] | undefined {
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const boundary = m?.[1] ?? m?.[2];
  if (!boundary) return undefined;
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: Part[] = [];
  let pos = body.indexOf(delimiter);
  if (pos < 0) return undefined;
  for (;;) {
    pos += delimiter.length;
    if (body.subarray(pos, pos + 2).toString() === '--') return parts;
    if (body.subarray(pos, pos + 2).toString() !== '\r\n') return undefined;
    pos += 2;
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), pos);
    if (next < 0) return undefined;
    const raw = body.subarray(pos, next);
    const split = raw.indexOf('\r\n\r\n');
    if (split < 0) return undefined;
    const headers: Record<string, string> = {};
    for (const line of raw.subarray(0, split).toString('utf8').split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    parts.push({ headers, body: raw.subarray(split + 4) });
    pos = next + 2;
  }
}

function parseMetadata(ctx: RouteContext, text: Buffer): Record<string, unknown> | undefined {
  if (text.length === 0) return {};
  try {
    const parsed: unknown = JSON.parse(text.toString('utf8'));
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // fall through
  }
  sendError(ctx.res, 400, 'parseError', 'Parse Error');
  return undefined;
}

/** Creates the file (fileId unset) or replaces its content; answers the file resource. */
function commit(
  ctx: RouteContext,
  fileId: string | undefined,
  metadata: Record<string, unknown>,
  content: Buffer,
  mediaType: string | undefined,
): DriveFile | undefined {
  if (fileId !== undefined) {
    const file = ctx.state.get(fileId);
    if (!file) {
      notFound(ctx.res, fileId);
      return undefined;
    }
    if (metadata.parents !== undefined) {
      sendError(
        ctx.res,
        403,
        'fieldNotWritable',
        'The parents field is not directly writable in update requests.',
      );
      return undefined;
    }
    if (!moveParents(ctx, file)) return undefined;
    if (typeof metadata.name === 'string') file.name = metadata.name;
    if (typeof metadata.mimeType === 'string') file.mimeType = metadata.mimeType;
    file.content = content;
    file.modifiedTime = new Date();
    return file;
  }
  const parents = Array.isArray(metadata.parents) ? (metadata.parents as string[]) : ['root'];
  for (const id of parents) {
    const parent = ctx.state.get(id);
    if (!parent || parent.mimeType !== FOLDER_MIME) {
      notFound(ctx.res, id);
      return undefined;
    }
  }
  return ctx.state.create({
    name: typeof metadata.name === 'string' ? metadata.name : 'Untitled',
    mimeType:
      typeof metadata.mimeType === 'string' ? metadata.mimeType : (mediaType ?? 'application/octet-stream'),
    parents,
    content,
  });
}

// POST /upload/drive/v3/files and PATCH /upload/drive/v3/files/{fileId}
export function upload(ctx: RouteContext, fileId: string | undefined): undefined {
  const uploadType = ctx.url.searchParams.get('uploadType');
  const contentType = ctx.req.headers['content-type'] ?? '';
  if (fileId !== undefined && !ctx.state.get(fileId)) return notFound(ctx.res, fileId);

  if (uploadType === 'media' || uploadType === 'multipart') {
    let metadata: Record<string, unknown> = {};
    let media: Buffer = ctx.body;
    let mediaType: string | undefined = contentType || undefined;
    if (uploadType === 'multipart') {
      // https://developers.google.com/drive/api/guides/manage-uploads#multipart — multipart/related,
      // metadata part (JSON) first, then the media part.
      const parts = parseMultipart(ctx.body, contentType);
      if (!/^multipart\/related/i.test(contentType) || !parts || parts.length !== 2) {
        return sendError(ctx.res, 400, 'badContent', 'Multipart upload must have exactly two parts.');
      }
      const [meta, content] = parts as [Part, Part];
      const parsed = parseMetadata(ctx, meta.body);
      if (!parsed) return;
      metadata = parsed;
      media = content.body;
      mediaType = content.headers['content-type'];
    }
    if (media.length > SINGLE_REQUEST_LIMIT) {
      return sendError(ctx.res, 413, 'uploadTooLarge', 'Media larger than 5 MB must use a resumable upload.');
    }
    const file = commit(ctx, fileId, metadata, ctx.tamper(media), mediaType);
    if (file) sendResource(ctx, 200, toResource(file), FILE_DEFAULT_FIELDS);
    return;
  }

  if (uploadType === 'resumable') {
    // https://developers.google.com/drive/api/guides/manage-uploads#send_the_initial_request
    const metadata = parseMetadata(ctx, ctx.body);
    if (!metadata) return;
    const uploadId = randomBytes(24).toString('base64url');
    const session: ResumableSession = { metadata, chunks: [], received: 0 };
    if (fileId !== undefined) session.fileId = fileId;
    const xType = ctx.req.headers['x-upload-content-type'];
    if (typeof xType === 'string') session.contentType = xType;
    ctx.state.sessions.set(uploadId, session);
    const location = new URL(ctx.url.pathname + ctx.url.search, ctx.origin);
    location.searchParams.set('upload_id', uploadId);
    ctx.res.writeHead(200, { location: location.toString(), 'content-length': 0 });
    ctx.res.end();
    return;
  }
  sendError(ctx.res, 400, 'invalid', `Invalid value for uploadType: ${uploadType ?? '(none)'}`);
}

// PUT <session URI> — https://developers.google.com/drive/api/guides/manage-uploads#uploading
// Content-Range "bytes a-b/total" (total "*" while unknown) or "bytes */total" to ask for the status
// or finish with no more bytes; 308 Resume Incomplete with Range "bytes=0-n" until the last byte.
export function uploadChunk(ctx: RouteContext, uploadId: string): undefined {
  const session = ctx.state.sessions.get(uploadId);
  if (!session) return sendError(ctx.res, 404, 'notFound', 'No such upload session.');
  if (session.done) return sendResource(ctx, 200, toResource(session.done), FILE_DEFAULT_FIELDS);
  const header = ctx.req.headers['content-range'] ?? `bytes 0-${ctx.body.length - 1}/${ctx.body.length}`;
  const status = /^bytes \*\/(\d+|\*)$/.exec(header);
  const chunk = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(header);
  let total: number | undefined;
  if (status) {
    if (ctx.body.length !== 0) return sendError(ctx.res, 400, 'badRequest', 'Unexpected body with */ range.');
    total = status[1] === '*' ? undefined : Number(status[1]);
  } else if (chunk) {
    const start = Number(chunk[1]);
    const end = Number(chunk[2]);
    total = chunk[3] === '*' ? undefined : Number(chunk[3]);
    if (start !== session.received) {
      return sendError(
        ctx.res,
        400,
        'badRequest',
        `Invalid request. According to the Content-Range header, the upload offset is ${start} byte(s), which does not match the uploaded size of ${session.received} byte(s).`,
      );
    }
    if (end - start + 1 !== ctx.body.length || (total !== undefined && end >= total)) {
      return sendError(
        ctx.res,
        400,
        'badRequest',
        'Invalid request. The Content-Range does not match the body.',
      );
    }
    const final = total !== undefined && end + 1 === total;
    if (!final && ctx.body.length % CHUNK_GRANULARITY !== 0) {
      return sendError(
        ctx.res,
        400,
        'badRequest',
        `Invalid request. The number of bytes uploaded is required to be equal or greater than 262144, except for the final request (it's recommended to be the exact multiple of 262144). The received request contained ${ctx.body.length} bytes, which does not meet this requirement.`,
      );
    }
    session.chunks.push(ctx.tamper(ctx.body));
    session.received += ctx.body.length;
  } else {
    return sendError(ctx.res, 400, 'badRequest', `Invalid Content-Range: ${header}`);
  }
  if (total !== undefined && session.received === total) {
    const file = commit(
      ctx,
      session.fileId,
      session.metadata,
      Buffer.concat(session.chunks),
      session.contentType,
    );
    if (!file) return;
    session.done = file;
    session.chunks = [];
    sendResource(ctx, 200, toResource(file), FILE_DEFAULT_FIELDS);
    return;
  }
  if (total !== undefined && session.received > total) {
    return sendError(ctx.res, 400, 'badRequest', 'More bytes than the declared total.');
  }
  const headers: Record<string, string | number> = { 'content-length': 0 };
  if (session.received > 0) headers.range = `bytes=0-${session.received - 1}`;
  ctx.res.writeHead(308, headers);
  ctx.res.end();
}

// DELETE <session URI> cancels an unfinished resumable upload, answered 499. Google's resumable
// protocol documents it for Cloud Storage (https://cloud.google.com/storage/docs/performing-resumable-uploads,
// "Cancel an upload"); Drive's upload server speaks the same protocol. The store ignores its answer.
export function cancelUpload(ctx: RouteContext, uploadId: string): undefined {
  if (!ctx.state.sessions.delete(uploadId))
    return sendError(ctx.res, 404, 'notFound', 'No such upload session.');
  ctx.res.writeHead(499, { 'content-length': 0 });
  ctx.res.end();
}
