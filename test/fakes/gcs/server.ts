// An in-memory Google Cloud Storage JSON API on loopback for the gcs store tests: the paths
// @google-cloud/storage calls (under /storage/v1 and /upload/storage/v1), bearer tokens from its own
// service-account token endpoint (/token), Google's error bodies, paging with a settable page size,
// resumable upload sessions, rewrites that take several calls, and throttle answers on demand.
// Reference: https://cloud.google.com/storage/docs/json_api/v1
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { segments, sendError } from './http.js';
import { download, insertUpload, resumableChunk } from './media.js';
import { ServiceAccountOAuth } from './oauth.js';
import {
  deleteObject,
  getBucket,
  getObject,
  insertBucket,
  listBuckets,
  listObjects,
  type RouteContext,
  rewriteObject,
} from './objects.js';
import { GcsState } from './state.js';

export interface FakeGcsOptions {
  /** Largest page a list answers (the real maximum is 1000). */
  pageSize?: number;
  /** Bytes a rewrite call copies before it answers "not done yet". */
  rewriteChunk?: number;
}

export interface RecordedRequest {
  method: string;
  /** Path and query as sent. */
  url: string;
  headers: IncomingMessage['headers'];
}

/** A queued answer for one upcoming request: throttle it, or let it through ('pass'). */
type Throttle = { status: number; retryAfter: number | undefined } | 'pass';

export class FakeGcs {
  readonly state = new GcsState();
  readonly oauth = new ServiceAccountOAuth();
  readonly requests: RecordedRequest[] = [];
  pageSize: number;
  rewriteChunk: number;
  #server: Server;
  #origin = '';
  #throttles: Throttle[] = [];

  private constructor(options: FakeGcsOptions) {
    this.pageSize = options.pageSize ?? 1000;
    this.rewriteChunk = options.rewriteChunk ?? 1024 * 1024 * 1024;
    this.#server = createServer((req, res) => {
      this.#handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) sendError(res, 500, 'backendError', `fake gcs: ${String(err)}`);
        else res.destroy();
      });
    });
  }

  static async start(options: FakeGcsOptions = {}): Promise<FakeGcs> {
    const fake = new FakeGcs(options);
    await new Promise<void>((resolve) => fake.#server.listen(0, '127.0.0.1', resolve));
    const { port } = fake.#server.address() as AddressInfo;
    fake.#origin = `http://127.0.0.1:${port}`;
    return fake;
  }

  /** The API base (metadata `endpoint`); stands for https://storage.googleapis.com. */
  get url(): string {
    return this.#origin;
  }

  /** The token endpoint (a key file's `token_uri`); stands for https://oauth2.googleapis.com/token. */
  get tokenUrl(): string {
    return `${this.#origin}/token`;
  }

  /**
   * The next `count` API requests (not token requests) answer as throttled GCS does: 429
   * rateLimitExceeded (or 503 backendError), with Retry-After when given.
   * https://cloud.google.com/storage/docs/json_api/v1/status-codes#429_Too_Many_Requests ,
   * https://cloud.google.com/storage/docs/retry-strategy
   */
  throttleNext(
    count: number,
    options: { status?: 429 | 503; retryAfter?: number; after?: number } = {},
  ): void {
    // `after`: let that many requests through first (e.g. to throttle a chunk, not the session start).
    for (let i = 0; i < (options.after ?? 0); i++) this.#throttles.push('pass');
    for (let i = 0; i < count; i++) {
      this.#throttles.push({ status: options.status ?? 429, retryAfter: options.retryAfter });
    }
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.#origin);
    this.requests.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers });
    const method = req.method ?? 'GET';

    if (url.pathname === '/token' && method === 'POST') {
      // The audience is the token URL as the client reached it (any name of this server).
      return this.oauth.handle(req, res, `http://${req.headers.host ?? ''}/token`);
    }

    const throttle = this.#throttles.shift();
    if (throttle && throttle !== 'pass') {
      req.resume();
      const retryAfter =
        throttle.retryAfter === undefined ? {} : { 'retry-after': String(throttle.retryAfter) };
      if (throttle.status === 429) {
        return sendError(
          res,
          429,
          'rateLimitExceeded',
          'The rate of change requests to the object is too high.',
          retryAfter,
        );
      }
      return sendError(res, 503, 'backendError', 'Backend Error', retryAfter);
    }

    const ctx: RouteContext = {
      state: this.state,
      req,
      res,
      query: url.searchParams,
      pageSize: this.pageSize,
      rewriteChunk: this.rewriteChunk,
    };
    const path = segments(url.pathname);
    const isUpload =
      path[0] === 'upload' && path[1] === 'storage' && path[2] === 'v1' && path[3] === 'b' && path[5] === 'o';

    // A resumable session URI authorizes its requests by itself ("The session URI serves as an
    // authentication token", https://cloud.google.com/storage/docs/resumable-uploads#session-uris).
    const uploadId = url.searchParams.get('upload_id');
    if (isUpload && uploadId && (method === 'PUT' || method === 'POST' || method === 'DELETE')) {
      return resumableChunk(ctx, uploadId);
    }

    // https://cloud.google.com/storage/docs/json_api/v1/status-codes#401_Unauthorized
    if (!this.oauth.check(req.headers.authorization)) {
      req.resume();
      return sendError(res, 401, 'authError', 'Invalid Credentials', {
        'www-authenticate': 'Bearer realm="https://accounts.google.com/"',
      });
    }

    // /upload/storage/v1/b/{bucket}/o — media, multipart and resumable uploads
    if (isUpload && method === 'POST' && path.length === 6)
      return insertUpload(ctx, path[4] as string, this.#origin);

    if (path[0] === 'storage' && path[1] === 'v1' && path[2] === 'b') {
      const rest = path.slice(3);
      if (rest.length === 0) {
        if (method === 'GET') return listBuckets(ctx);
        if (method === 'POST') return insertBucket(ctx);
      }
      const bucket = rest[0] as string;
      if (rest.length === 1 && method === 'GET') return getBucket(ctx, bucket);
      if (rest.length === 2 && rest[1] === 'o' && method === 'GET') return listObjects(ctx, bucket);
      if (rest.length === 3 && rest[1] === 'o') {
        const name = rest[2] as string;
        if (method === 'GET') {
          return url.searchParams.get('alt') === 'media'
            ? download(ctx, bucket, name)
            : getObject(ctx, bucket, name);
        }
        if (method === 'DELETE') return deleteObject(ctx, bucket, name);
      }
      // {src}/o/{name}/rewriteTo/b/{dst}/o/{name}
      if (
        rest.length === 8 &&
        rest[1] === 'o' &&
        rest[3] === 'rewriteTo' &&
        rest[4] === 'b' &&
        rest[6] === 'o'
      ) {
        if (method === 'POST') {
          return rewriteObject(
            ctx,
            { bucket, name: rest[2] as string },
            { bucket: rest[5] as string, name: rest[7] as string },
          );
        }
      }
    }

    req.resume();
    sendError(res, 404, 'notFound', `Not Found: ${method} ${url.pathname}`);
  }
}
