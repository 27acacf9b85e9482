// Files through ferry (docs/api.md, "Files through ferry"): PUT /v1/files/<location>/<path> stores the
// request body, GET and HEAD stream the file back. Both stream: an upload goes to the store's write()
// as it arrives, under the transfer memory budget (FERRY_TRANSFER_MEMORY), never held whole; a download
// is the store's read() piped to the client, with ranges (src/http/file-answer.ts, shared with share
// links). What is checked before a byte moves (the location, the path, the location's state, the
// declared size against the store's limit) is src/domain/files.ts.
//
// The rules the bytes keep, each in docs/api.md "Files through ferry":
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
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Entry } from '../../api/listing.js';
import { FileBody } from '../../api/streams.js';
import { type Files, tooLarge } from '../../domain/files.js';
import type { KeyWatch } from '../../domain/key-watch.js';
import { FerryError, invalid } from '../../errors.js';
import { type Throttle, throttled } from '../../objects/throttle.js';
import type { ObjectInfo } from '../../stores/contract.js';
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
export function fileTarget(url: string): { location: string; path: string } {
  const raw = (url.split('?')[0] ?? '').slice(FILES_PREFIX.length);
  const slash = raw.indexOf('/');
  const location = slash === -1 ? raw : raw.slice(0, slash);
  const path = slash === -1 ? '' : raw.slice(slash + 1);
  let target: { location: string; path: string };
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

/** An error answered with a status no error kind has (408). */
function statusError(status: number, message: string): Error {
  return Object.assign(new Error(message), { statusCode: status });
}

/**
 * The upload's bytes on their way to the store: counted (the limit, the metrics) and watched for a
 * client that stops sending. The idle timer fires only while ferry waits on the client: when the
 * store is the slow side, bytes wait here (writableLength) and the timer starts again.
 */
export class UploadBody extends Transform {
  bytes = 0;
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly limit: number,
    private readonly idleMs: number,
    private readonly onBytes: (bytes: number) => void,
    private readonly overLimit: () => Error,
  ) {
    super();
    this.#timer = setTimeout(() => this.#idle(), idleMs);
    this.once('close', () => clearTimeout(this.#timer));
  }

  #idle(): void {
    if (this.destroyed) return;
    if (this.writableLength > 0 || this.readableLength >= this.readableHighWaterMark) {
      this.#timer.refresh();
      return;
    }
    this.destroy(
      statusError(408, `no byte of the body arrived for ${this.idleMs / 1000} s; the upload was stopped`),
    );
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.limit) {
      done(this.overLimit());
      return;
    }
    this.#timer.refresh();
    this.onBytes(chunk.length);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    clearTimeout(this.#timer);
    done();
  }
}

/** Counts a download's bytes as they leave. */
function counted(body: Readable, onBytes: (bytes: number) => void): Transform {
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      onBytes(chunk.length);
      done(null, chunk);
    },
  });
  body.once('error', (err) => meter.destroy(err));
  meter.once('close', () => body.destroy());
  return body.pipe(meter);
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
function entryOf(path: string, info: ObjectInfo) {
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
        const { keyId, workspaceId } = caller;
        const target = fileTarget(request.url);
        const raw = request.raw;
        const size = declaredSize(raw);
        const open = await files.openForWrite(caller, target.location, target.path, size, auditOf(request));
        const { store, path, row } = open;
        const controller = new AbortController();
        let failure: unknown;
        const body = new UploadBody(open.limit, deps.idleMs, bytes.received, () =>
          tooLarge(undefined, open.limit, row),
        );
        const fail = (err: unknown) => {
          failure ??= err;
          controller.abort(err);
          body.destroy(err as Error);
        };
        body.once('error', (err) => {
          failure ??= err;
          controller.abort(err);
        });
        const gone = () => {
          if (!raw.complete) fail(statusError(400, 'the client closed the connection before the body ended'));
        };
        raw.once('close', gone);
        raw.once('aborted', gone);
        const unwatch = keyWatch.watch(keyId, (reason) => fail(new FerryError('unauthenticated', reason)));
        raw.pipe(body);
        try {
          const contentType = request.headers['content-type'];
          // The cap waits after the idle watch: a wait for the cap is not a client gone quiet.
          const capped = throttled(body, deps.throttle?.(workspaceId), controller.signal);
          const info = await store.write(path, capped, {
            ...(size === undefined ? {} : { size }),
            ...(contentType === undefined ? {} : { mimeType: contentType }),
            signal: controller.signal,
            memoryWait: { timeoutMs: deps.idleMs, signal: closing.signal },
          });
          await open.stored();
          return reply.code(201).send(entryOf(path, info));
        } catch (err) {
          const reason = failure ?? err;
          // The line a client that went away never sees: its answer has nowhere to go.
          request.log.info(
            { reason: reason instanceof Error ? reason.message : String(reason) },
            'upload stopped before it was stored',
          );
          throw reason;
        } finally {
          unwatch();
          raw.off('close', gone);
          raw.off('aborted', gone);
          raw.unpipe(body);
          body.destroy();
          await store.close();
        }
      },
    );

    const download = (head: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
      const caller = principalOf(request);
      const { keyId, workspaceId } = caller;
      const target = fileTarget(request.url);
      const { store, path, info } = await files.openForRead(caller, target.location, target.path);
      const closeStore = () => void store.close().catch(() => {});
      const part = fileAnswer(request, reply, info, { ranges: true, path });
      if (!part || head) {
        closeStore();
        return part ? reply.send() : reply;
      }
      let source: Readable;
      try {
        source = await store.read(path, {
          ...readOptions(part),
          ...(info.etag === undefined ? {} : { ifMatch: info.etag }),
        });
      } catch (err) {
        closeStore();
        clearFileHeaders(reply);
        throw err;
      }
      const out = throttled(counted(source, bytes.sent), deps.throttle?.(workspaceId));
      // The answer ends with its key (docs/api.md, "Live progress"): cut short of Content-Length.
      const unwatch = keyWatch.watch(keyId, () => {
        out.destroy();
        reply.raw.destroy();
      });
      reply.raw.once('close', () => {
        unwatch();
        out.destroy();
        closeStore();
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
