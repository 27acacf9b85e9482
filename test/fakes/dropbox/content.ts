// Content routes of the fake Dropbox (content host): upload, upload sessions, download. Each route
// follows its section of https://www.dropbox.com/developers/documentation/http/documentation.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseRange, sendJson, sendText } from '../server.js';
import { BadRequest } from './http.js';
import type { FakeDropbox } from './server.js';
import { contentHash, type DropboxNamespace, metadataOf, RouteError } from './state.js';

export interface ContentCall {
  fake: FakeDropbox;
  ns: DropboxNamespace;
  owner: string;
  route: string;
  arg: Record<string, unknown>;
  body: Buffer;
  req: IncomingMessage;
  res: ServerResponse;
}

/** A single request carries at most 150 MiB ("files/upload": "Do not use this to upload a file larger than 150 MB"). */
const MAX_REQUEST = 150 * 1024 * 1024;

/** HTTP header safe JSON, as Dropbox writes Dropbox-API-Result. */
function headerSafe(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

export function handleContent(call: ContentCall) {
  const { fake, ns, route, arg, req, res } = call;
  let { body } = call;
  if (route !== 'files/download') {
    // Content-upload endpoints take the bytes as application/octet-stream.
    if (!/^application\/octet-stream\b/.test(req.headers['content-type'] ?? '')) {
      throw new BadRequest(`Bad HTTP "Content-Type" header: "${req.headers['content-type'] ?? ''}".`);
    }
    if (body.length > MAX_REQUEST) throw new RouteError('payload_too_large', []);
    body = fake.server.tamper(req, body);
    // Every upload route takes content_hash, the content hash of the bytes of this call: "If provided
    // and the uploaded content does not match this hash, an error will be returned".
    if (typeof arg.content_hash === 'string' && arg.content_hash !== contentHash(body)) {
      throw new RouteError('content_hash_mismatch', []);
    }
  }
  switch (route) {
    // #files-upload: Dropbox-API-Arg {path, mode, autorename, mute, strict_conflict} -> FileMetadata
    case 'files/upload': {
      const path = ns.check('path', arg.path);
      return sendJson(res, 200, metadataOf(ns.write(path, body, modeOf(arg.mode)), false));
    }
    // #files-upload_session-start: {close, session_type?} + first bytes -> {session_id}
    case 'files/upload_session/start': {
      const id = fake.newSession(call.owner);
      const session = fake.sessions.get(id);
      if (session) {
        session.chunks.push(body);
        session.offset = body.length;
        session.closed = arg.close === true;
      }
      return sendJson(res, 200, { session_id: id });
    }
    // #files-upload_session-append_v2: {cursor: {session_id, offset}, close} + bytes -> null
    case 'files/upload_session/append_v2': {
      const session = lookup(call, arg.cursor, 'not_found');
      if (session.closed) throw new RouteError('closed', []);
      session.chunks.push(body);
      session.offset += body.length;
      session.closed = arg.close === true;
      return sendJson(res, 200, null);
    }
    // #files-upload_session-finish: {cursor, commit: {path, mode, ...}} + last bytes -> FileMetadata
    case 'files/upload_session/finish': {
      const session = lookup(call, arg.cursor, 'lookup_failed');
      const commit = (arg.commit ?? {}) as Record<string, unknown>;
      const path = ns.check('path', commit.path);
      session.chunks.push(body);
      const id = (arg.cursor as { session_id: string }).session_id;
      const node = ns.write(path, Buffer.concat(session.chunks), modeOf(commit.mode));
      fake.sessions.delete(id);
      return sendJson(res, 200, metadataOf(node, false));
    }
    // #files-download: {path} -> the bytes, metadata in Dropbox-API-Result; Range honoured (206).
    case 'files/download': {
      const node = ns.get('path', ns.check('path', arg.path));
      if (node.tag !== 'file') throw new RouteError('path', ['not_file']);
      const size = node.content.length;
      const range = parseRange(req.headers.range, size);
      res.setHeader('dropbox-api-result', headerSafe(metadataOf(node, false)));
      res.setHeader('content-type', 'application/octet-stream');
      if (range === 'unsatisfiable') {
        res.setHeader('content-range', `bytes */${size}`);
        return sendText(res, 416, 'Requested Range Not Satisfiable');
      }
      if (range) {
        res.writeHead(206, {
          'content-range': `bytes ${range.start}-${range.end}/${size}`,
          'content-length': range.end - range.start + 1,
        });
        return void res.end(node.content.subarray(range.start, range.end + 1));
      }
      res.writeHead(200, { 'content-length': size });
      return void res.end(node.content);
    }
    default:
      throw new BadRequest(`Unknown API function: "${route}"`);
  }
}

function modeOf(mode: unknown): string {
  if (mode === undefined || mode === 'add') return 'add';
  if (
    mode === 'overwrite' ||
    (typeof mode === 'object' && (mode as { '.tag'?: unknown })['.tag'] === 'overwrite')
  ) {
    return 'overwrite';
  }
  throw new BadRequest('unsupported write mode in this fake');
}

/** The session of an UploadSessionCursor; a wrong offset answers incorrect_offset with the right one. */
function lookup(call: ContentCall, cursor: unknown, where: string) {
  const { session_id: id, offset } = (cursor ?? {}) as { session_id?: unknown; offset?: unknown };
  const session = typeof id === 'string' ? call.fake.sessions.get(id) : undefined;
  if (!session || session.owner !== call.owner) {
    throw where === 'not_found' ? new RouteError('not_found', []) : new RouteError(where, ['not_found']);
  }
  if (offset !== session.offset) {
    throw where === 'not_found'
      ? new RouteError('incorrect_offset', [])
      : new RouteError(where, ['incorrect_offset']);
  }
  return session;
}
