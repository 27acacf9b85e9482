// An in-memory Google Cloud Storage JSON API on loopback for the gcs store tests: the paths
// @google-cloud/storage calls (under /storage/v1 and /upload/storage/v1), bearer tokens from its own
// service-account token endpoint (/token), Google's error bodies, paging with a settable page size,
// resumable upload sessions, rewrites that take several calls, and throttle answers on demand (the
// recorded answers of ./fixtures).
// Reference: https://cloud.google.com/storage/docs/json_api/v1
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fixture } from '../fixtures.js';
import { googleError } from '../google.js';
import { FakeServer, type RecordedRequest, sendJson } from '../server.js';
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

export type { RecordedRequest };

export class FakeGcs {
  readonly state = new GcsState();
  readonly oauth = new ServiceAccountOAuth();
  /** The listener, the request log and the queue of forced answers (inject a fixture there). */
  readonly server = new FakeServer();
  pageSize: number;
  rewriteChunk: number;
  #origin = '';

  private constructor(options: FakeGcsOptions) {
    this.pageSize = options.pageSize ?? 1000;
    this.rewriteChunk = options.rewriteChunk ?? 1024 * 1024 * 1024;
  }

  static async start(options: FakeGcsOptions = {}): Promise<FakeGcs> {
    const fake = new FakeGcs(options);
    fake.#origin = await fake.server.listen(
      (req, res) => fake.#handle(req, res),
      (err, res) => sendError(res, 500, 'backendError', `fake gcs: ${String(err)}`),
    );
    return fake;
  }

  /** Every request received (token requests included). */
  get requests(): RecordedRequest[] {
    return this.server.requests;
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
    this.server.inject('pass', options.after ?? 0);
    const recorded = fixture('gcs', options.status === 503 ? 'unavailable_503' : 'rate_limit');
    const headers: Record<string, string> =
      options.retryAfter === undefined ? {} : { 'retry-after': String(options.retryAfter) };
    this.server.inject({ status: recorded.status, headers, body: googleError(recorded, {}) }, count);
  }

  async close(): Promise<void> {
    await this.server.close();
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.#origin);
    const method = req.method ?? 'GET';

    if (url.pathname === '/token' && method === 'POST') {
      // The audience is the token URL as the client reached it (any name of this server).
      return this.oauth.handle(req, res, `http://${req.headers.host ?? ''}/token`);
    }

    if (this.server.takeFault(req, res)) return;

    const ctx: RouteContext = {
      state: this.state,
      req,
      res,
      query: url.searchParams,
      pageSize: this.pageSize,
      rewriteChunk: this.rewriteChunk,
      tamper: (media) => this.server.tamper(req, media),
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
      const recorded = fixture('gcs', 'error_unauthorized');
      return sendJson(res, recorded.status, recorded.body, recorded.headers);
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
