// Upload-host routes of the fake Box (https://upload.box.com/api/2.0/...): single multipart uploads
// and chunked upload sessions, each route named after its Box API reference page.
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from '../server.js';
import type { FakeBox } from './server.js';
import { BoxApiError, type BoxTree, resourceOf } from './state.js';

export interface UploadSession {
  owner: string;
  folderId: string;
  fileId: string | undefined;
  name: string;
  size: number;
  partSize: number;
  parts: Map<number, { part_id: string; offset: number; size: number; sha1: string; data: Buffer }>;
}

export interface UploadCall {
  fake: FakeBox;
  tree: BoxTree;
  owner: string;
  method: string;
  /** Below /api/2.0, e.g. "/files/content". */
  path: string;
  url: URL;
  req: IncomingMessage;
  body: Buffer;
  res: ServerResponse;
}

export function handleUpload(call: UploadCall) {
  const { fake, tree, method, path, req, body, res } = call;
  const fields = call.url.searchParams.get('fields')?.split(',');
  let m: RegExpExecArray | null;
  // "Upload file": POST /files/content, multipart (attributes {name, parent: {id}}, then file) -> 201
  // "Upload file version": POST /files/{file_id}/content, multipart (attributes {name?}, file) -> 201
  m = method === 'POST' ? /^\/files(?:\/(\w+))?\/content$/.exec(path) : null;
  if (m) {
    const parsed = parseMultipart(req, body);
    const { attributes } = parsed;
    const file = fake.server.tamper(req, parsed.file);
    const sha1 = req.headers['content-md5'];
    if (sha1 !== undefined && sha1 !== createHash('sha1').update(file).digest('hex')) {
      throw new BoxApiError(400, 'bad_digest', 'The specified content-md5 did not match what we received');
    }
    const name = typeof attributes.name === 'string' ? attributes.name : undefined;
    const node = m[1]
      ? tree.newVersion(m[1], file, name)
      : tree.createFile(
          String((attributes.parent as { id?: unknown } | undefined)?.id),
          name as string,
          file,
        );
    return sendJson(res, 201, { total_count: 1, entries: [resourceOf(node, fields)] });
  }
  // "Create upload session": POST /files/upload_sessions {folder_id, file_size, file_name}
  // "Create upload session for existing file": POST /files/{file_id}/upload_sessions {file_size, file_name?}
  m = method === 'POST' ? /^\/files(?:\/(\w+))?\/upload_sessions$/.exec(path) : null;
  if (m) {
    const arg = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    const size = Number(arg.file_size);
    if (!Number.isInteger(size) || size < fake.minSessionSize) {
      throw new BoxApiError(400, 'file_size_too_small', `file_size must be at least ${fake.minSessionSize}`);
    }
    const existing = m[1] ? tree.get(m[1], 'file') : undefined;
    const folderId = existing?.parentId ?? String(arg.folder_id);
    const name = typeof arg.file_name === 'string' ? arg.file_name : (existing?.name ?? '');
    tree.get(folderId, 'folder');
    if (!existing) tree.assertFree(folderId, name);
    const id = randomBytes(16).toString('hex').toUpperCase();
    fake.sessions.set(id, {
      owner: call.owner,
      folderId,
      fileId: existing?.id,
      name,
      size,
      partSize: fake.partSize,
      parts: new Map(),
    });
    const base = `${fake.uploadUrl}/2.0/files/upload_sessions/${id}`;
    return sendJson(res, 201, {
      id,
      type: 'upload_session',
      session_expires_at: new Date(Date.now() + 7 * 86400_000).toISOString(),
      part_size: fake.partSize,
      total_parts: Math.ceil(size / fake.partSize),
      num_parts_processed: 0,
      session_endpoints: {
        upload_part: base,
        commit: `${base}/commit`,
        abort: base,
        list_parts: `${base}/parts`,
        status: base,
        log_event: `${base}/log`,
      },
    });
  }
  // "Upload part of file": PUT /files/upload_sessions/{id}, Content-Range + Digest: sha=<base64 SHA-1>
  m = method === 'PUT' ? /^\/files\/upload_sessions\/(\w+)$/.exec(path) : null;
  if (m) {
    const body = fake.server.tamper(req, call.body);
    const session = sessionOf(call, m[1] as string);
    const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(req.headers['content-range'] ?? '');
    if (!range) throw new BoxApiError(400, 'bad_request', 'Content-Range is required');
    const [start, end, total] = [Number(range[1]), Number(range[2]), Number(range[3])];
    const last = end + 1 === session.size;
    if (
      total !== session.size ||
      start % session.partSize !== 0 ||
      end - start + 1 !== body.length ||
      (!last && body.length !== session.partSize) ||
      body.length > session.partSize
    ) {
      throw new BoxApiError(416, 'range_not_satisfiable', 'The part does not fit the session');
    }
    const digest = /^sha=(.+)$/.exec(String(req.headers.digest ?? ''))?.[1];
    const sha1 = createHash('sha1').update(body);
    if (digest !== sha1.copy().digest('base64')) {
      throw new BoxApiError(412, 'precondition_failed', 'The digest does not match the part');
    }
    const part = {
      part_id: randomBytes(4).toString('hex').toUpperCase(),
      offset: start,
      size: body.length,
      sha1: sha1.digest('hex'),
    };
    session.parts.set(start, { ...part, data: body });
    return sendJson(res, 200, { part });
  }
  // "Commit upload session": POST /files/upload_sessions/{id}/commit {parts}, Digest of the whole file
  m = method === 'POST' ? /^\/files\/upload_sessions\/(\w+)\/commit$/.exec(path) : null;
  if (m) {
    const id = m[1] as string;
    const session = sessionOf(call, id);
    if (fake.commitPending > 0) {
      // "In some cases, creating the parts might not be ready yet": 202 + Retry-After, commit again.
      fake.commitPending -= 1;
      res.writeHead(202, { 'retry-after': '0', 'content-length': 0 });
      return void res.end();
    }
    const arg = JSON.parse(body.toString('utf8')) as { parts?: Array<{ part_id: string; offset: number }> };
    const listed = arg.parts ?? [];
    const stored = [...session.parts.values()].sort((a, b) => a.offset - b.offset);
    const complete =
      listed.length === stored.length &&
      listed.every((p, i) => p.part_id === stored[i]?.part_id && p.offset === stored[i]?.offset) &&
      stored.reduce((n, p) => n + p.size, 0) === session.size;
    if (!complete) throw new BoxApiError(400, 'bad_request', 'The parts do not make up the file');
    const content = Buffer.concat(stored.map((p) => p.data));
    const digest = /^sha=(.+)$/.exec(String(req.headers.digest ?? ''))?.[1];
    if (digest !== createHash('sha1').update(content).digest('base64')) {
      throw new BoxApiError(412, 'precondition_failed', 'The digest does not match the file');
    }
    const node = session.fileId
      ? tree.newVersion(session.fileId, content, session.name)
      : tree.createFile(session.folderId, session.name, content);
    fake.sessions.delete(id);
    return sendJson(res, 201, { total_count: 1, entries: [resourceOf(node, fields)] });
  }
  // "Remove upload session": DELETE /files/upload_sessions/{id} -> 204
  m = method === 'DELETE' ? /^\/files\/upload_sessions\/(\w+)$/.exec(path) : null;
  if (m) {
    sessionOf(call, m[1] as string);
    fake.sessions.delete(m[1] as string);
    res.writeHead(204);
    return void res.end();
  }
  throw new BoxApiError(404, 'not_found', `Not Found: ${method} ${path}`);
}

function sessionOf(call: UploadCall, id: string): UploadSession {
  const session = call.fake.sessions.get(id);
  if (!session || session.owner !== call.owner)
    throw new BoxApiError(404, 'not_found', 'Upload session not found');
  return session;
}

/** multipart/form-data with the "attributes" part BEFORE the "file" part, as "Upload file" requires. */
function parseMultipart(
  req: IncomingMessage,
  body: Buffer,
): { attributes: Record<string, unknown>; file: Buffer } {
  const boundary = /boundary=("?)([^";]+)\1/.exec(req.headers['content-type'] ?? '')?.[2];
  if (!boundary) throw new BoxApiError(400, 'bad_request', 'multipart/form-data with a boundary is required');
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: Array<{ name: string; data: Buffer }> = [];
  let at = body.indexOf(delimiter);
  while (at >= 0) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, start);
    if (next < 0) break;
    const chunk = body.subarray(start + 2, next - 2); // drop CRLF after the delimiter and before the next
    const split = chunk.indexOf('\r\n\r\n');
    const headers = chunk.subarray(0, split).toString('utf8');
    const name = /name="([^"]*)"/.exec(headers)?.[1] ?? '';
    parts.push({ name, data: chunk.subarray(split + 4) });
    at = next;
  }
  const attributesAt = parts.findIndex((p) => p.name === 'attributes');
  const fileAt = parts.findIndex((p) => p.name === 'file');
  if (attributesAt < 0 || fileAt < 0 || attributesAt > fileAt) {
    throw new BoxApiError(400, 'bad_request', 'attributes must come before file');
  }
  return {
    attributes: JSON.parse((parts[attributesAt] as { data: Buffer }).data.toString('utf8')) as Record<
      string,
      unknown
    >,
    file: (parts[fileAt] as { data: Buffer }).data,
  };
}
