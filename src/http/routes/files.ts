// Files through ferry (docs/api.md, "Files through ferry"): PUT /v1/files/<location>/<path> stores the
// request body, GET and HEAD stream the file back. Both stream: an upload goes to the store's write()
// as it arrives, under the transfer memory budget (FERRY_TRANSFER_MEMORY), never held whole; a download
// is the store's read() piped to the client, with ranges (src/http/file-answer.ts, shared with share
// links). This route speaks HTTP: it reads the target from the URL and the size and type from the
// headers, hands the body and its limits to src/domain/files.ts (which opens the store, checks, writes
// or reads, records and closes), ends the upload or download when the client goes away or its key
// ends, and answers what comes back.
//
// The rules the bytes keep, this route and the domain between them, each in docs/api.md "Files through
// ferry":
// - The body is read raw, whatever its content type, without the JSON body limit: this plugin has its
//   own content-type parser, which leaves the stream unread; every other route keeps its parsers.
// - An upload is out of Node's whole-body deadline (it may take hours) and is cut off instead when no
//   byte arrives for FERRY_HTTP_BODY_TIMEOUT_SECONDS while ferry is ready for more (408).
// - A body past the store's limit is refused from Content-Length before it is read, or cut off once it
//   passes the limit without one (413). A Content-Length past 2^53 - 1, which a JavaScript number
//   cannot hold exactly, is past every store's limit, and refused the same way.
// - The store takes each part's room in the transfer memory budget before reading it; a wait for room
//   ends at the idle deadline (503 with Retry-After: ferry, not the client, is the slow side) and when
//   the server begins to close, so neither an upload nor shutdown waits on the budget without end.
// - A client that goes away, a stall, a limit passed or the key revoked abort the store's write: no
//   object that looks complete is left (S3 aborts its multipart upload; Azure never commits the
//   blocks; a single-request upload is never sent).
// - An open upload or download whose key is revoked or expires ends within a second
//   (src/domain/key-watch.ts), an upload with 401, a download by closing the connection short of its
//   Content-Length.
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Entry } from '../../api/listing.js';
import { FileBody } from '../../api/streams.js';
import type { Files, FileTarget, FoundFile } from '../../domain/files.js';
import type { KeyWatch } from '../../domain/key-watch.js';
import { FerryError, invalid } from '../../errors.js';
import type { Throttle } from '../../objects/throttle.js';
import { auditOf } from '../audit.js';
import { principalOf } from '../auth.js';
import { streamsItsBody } from '../connections.js';
import { DEFAULT_RETRY_AFTER_SECONDS } from '../errors.js';
import { baseName, clearFileHeaders, fileAnswer, readOptions, sendFileBody } from '../file-answer.js';
import type { FileBytes } from '../metrics.js';
import { errors } from '../schemas.js';

export const FILES_PREFIX = '/v1/files/';

export interface FileRouteDeps {
  files: Files;
  keyWatch: KeyWatch;
  bytes: FileBytes;
  /** An upload with no byte for this long, while ferry waits for one, is cut off (408). */
  idleMs: number;
  /** The workspace's bandwidth cap (FERRY_WORKSPACE_BANDWIDTH, docs/api.md "Bandwidth"), if any. */
  throttle?: (workspaceId: string) => Throttle | undefined;
}

/** The location and the path a URL names: each percent-decoded on its own, so a label may hold "/". */
export function fileTarget(url: string): FileTarget {
  const raw = (url.split('?')[0] ?? '').slice(FILES_PREFIX.length);
  const slash = raw.indexOf('/');
  const location = slash === -1 ? raw : raw.slice(0, slash);
  const path = slash === -1 ? '' : raw.slice(slash + 1);
  let target: FileTarget;
  try {
    target = { location: decodeURIComponent(location), path: decodeURIComponent(path) };
  } catch {
    throw invalid('the URL is not valid percent-encoded UTF-8');
  }
  // NUL is refused in every input (docs/api.md, "Input"): a database would refuse
  // it too, PostgreSQL with an error of its own, so it never gets that far.
  if (target.location.includes('\u0000')) throw invalid('the location must not contain U+0000 (NUL)');
  if (target.path.includes('\u0000')) throw invalid('the path must not contain U+0000 (NUL)');
  return target;
}

/**
 * Content-Length as a number; undefined when the body is chunked. Node's parser has checked the header
 * (digits, one value, at most 2^64 - 1); a length a JavaScript number cannot hold exactly (past 2^53 - 1)
 * is Infinity, which every store's limit refuses (413) before a byte is read.
 */
function declaredSize(request: IncomingMessage): number | undefined {
  if (request.headers['transfer-encoding'] !== undefined) return undefined;
  const header = request.headers['content-length'];
  if (header === undefined) return 0;
  const size = Number(header);
  if (!Number.isInteger(size) || size < 0) throw invalid('Content-Length must be a whole number of bytes');
  return Number.isSafeInteger(size) ? size : Number.POSITIVE_INFINITY;
}

/** The listing entry of what was stored (docs/api.md, "Listing objects"). */
function entryOf({ path, info }: FoundFile) {
  return {
    name: baseName(path),
    path,
    size: info.size,
    isDir: false,
    ...(info.mimeType === undefined ? {} : { mimeType: info.mimeType }),
    ...(info.modTime === undefined ? {} : { modTime: info.modTime.toISOString() }),
  };
}

export const fileRoutes =
  (deps: FileRouteDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { files, keyWatch, bytes } = deps;
    // Aborted when the server begins to close: it ends the uploads that wait for room in the transfer
    // memory (a wait must not hold shutdown), and no other.
    const closing = new AbortController();
    app.addHook('preClose', (done) => {
      closing.abort(
        new FerryError('unavailable', 'the server is shutting down; try again', {
          retryAfterSeconds: DEFAULT_RETRY_AFTER_SECONDS,
        }),
      );
      done();
    });
    // Any content type is the file's own: the body is left unread for the handler to stream. Scoped to
    // this plugin, so every other route keeps the JSON parser and its body limit.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));

    const fileErrors = errors(400, 401, 403, 404, 409, 502, 503);

    app.put(
      `${FILES_PREFIX}*`,
      {
        config: { scope: 'transfer', rateLimit: 'files' },
        // Before anything else: the body may take longer than Node's whole-request deadline.
        onRequest: (_request, reply, done) => {
          streamsItsBody(reply.raw);
          done();
        },
        schema: {
          summary: 'Upload a file: the request body is stored at the path, streamed',
          tags: ['files'],
          response: {
            201: Entry,
            ...fileErrors,
            ...errors(408, 413),
          },
        },
      },
      async (request, reply) => {
        const caller = principalOf(request);
        const target = fileTarget(request.url);
        const raw = request.raw;
        const size = declaredSize(raw);
        const contentType = request.headers['content-type'];
        // What ends the upload from outside: the client gone before its body ended, or its key.
        const stop = new AbortController();
        const gone = () => {
          if (!raw.complete) stop.abort(invalid('the client closed the connection before the body ended'));
        };
        raw.once('close', gone);
        raw.once('aborted', gone);
        const unwatch = keyWatch.watch(caller.keyId, (reason) =>
          stop.abort(new FerryError('unauthenticated', reason)),
        );
        try {
          const stored = await files.upload(
            caller,
            { ...target, size, mimeType: contentType, body: raw, audit: auditOf(request) },
            {
              idleMs: deps.idleMs,
              throttle: deps.throttle?.(caller.workspaceId),
              onBytes: bytes.received,
              signal: stop.signal,
              closing: closing.signal,
              log: request.log,
            },
          );
          return reply.code(201).send(entryOf(stored));
        } finally {
          unwatch();
          raw.off('close', gone);
          raw.off('aborted', gone);
        }
      },
    );

    const download = (head: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
      const caller = principalOf(request);
      const target = fileTarget(request.url);
      // Ends the read when the answer ends early: the client gone, or its key (below).
      const stop = new AbortController();
      let out: Readable | undefined;
      try {
        out = await files.download(
          caller,
          target,
          (file) => {
            const part = fileAnswer(request, reply, file.info, { ranges: true, path: file.path });
            return part === undefined || head ? undefined : readOptions(part);
          },
          { throttle: deps.throttle?.(caller.workspaceId), onBytes: bytes.sent, signal: stop.signal },
        );
      } catch (err) {
        clearFileHeaders(reply);
        throw err;
      }
      // HEAD, or a range past the end, which fileAnswer has answered (416).
      if (out === undefined) return reply.sent ? reply : reply.send();
      // The answer ends with its key (docs/api.md, "Live progress"): cut short of Content-Length.
      const unwatch = keyWatch.watch(caller.keyId, () => {
        stop.abort();
        reply.raw.destroy();
      });
      reply.raw.once('close', () => {
        unwatch();
        stop.abort();
      });
      return sendFileBody(reply, out);
    };

    const fileResponse = (status: number, description: string) => ({
      [status]: { description, content: { 'application/octet-stream': { schema: FileBody } } },
    });
    for (const head of [false, true]) {
      const method = head ? app.head.bind(app) : app.get.bind(app);
      method(
        `${FILES_PREFIX}*`,
        {
          // The HEAD route is declared, not derived from GET, so /openapi.json shows it.
          config: {
            scope: 'read',
            rateLimit: 'files',
            ...(head ? { swagger: { exposeHeadRoute: true } } : {}),
          },
          exposeHeadRoute: false,
          schema: {
            summary: head ? "A file's headers, as GET answers them" : 'Download a file (Range supported)',
            tags: ['files'],
            response: {
              ...fileResponse(200, 'The whole file'),
              ...fileResponse(206, 'The byte range asked for'),
              416: { description: 'The range starts past the end of the file' },
              ...fileErrors,
            },
          },
        },
        download(head),
      );
    }
  };
