// An in-memory Google Drive API v3 on loopback for the store tests: the real paths under
// /drive/v3 and /upload/drive/v3, bearer tokens, partial responses, paging, resumable uploads,
// Google's error bodies, and rate-limit answers on demand; bodies are filled in from ./fixtures.
// Reference: https://developers.google.com/drive/api/reference/rest/v3
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fixture } from '../fixtures.js';
import { FakeOAuth } from '../oauth.js';
import { FakeServer, type RecordedRequest, readBody, sendJson } from '../server.js';
import { copyFile, createFile, deleteFile, getFile, listFiles, updateFile } from './files.js';
import { googleError, type RouteContext, sendError } from './http.js';
import { DriveState, FOLDER_MIME } from './state.js';
import { cancelUpload, upload, uploadChunk } from './upload.js';

export interface FakeDriveOptions {
  /** Largest page files.list answers, whatever pageSize asks (the real maximum is 1000). */
  maxPageSize?: number;
  /** The authorization server whose access tokens this API accepts; default: a new stable one. */
  oauth?: FakeOAuth;
}

export type { RecordedRequest };

export class FakeDrive {
  readonly state = new DriveState();
  readonly oauth: FakeOAuth;
  /** The listener, the request log and the queue of forced answers (inject a fixture there). */
  readonly server = new FakeServer();
  maxPageSize: number;
  #origin = '';

  private constructor(options: FakeDriveOptions) {
    this.maxPageSize = options.maxPageSize ?? 1000;
    this.oauth = options.oauth ?? new FakeOAuth({ rotation: 'stable', prefix: 'ya29.', provider: 'drive' });
  }

  static async start(options: FakeDriveOptions = {}): Promise<FakeDrive> {
    const fake = new FakeDrive(options);
    fake.#origin = await fake.server.listen(
      (req, res) => fake.#handle(req, res),
      (err, res) => sendError(res, 500, 'backendError', `fake drive: ${String(err)}`),
    );
    return fake;
  }

  /** Every request received (token requests included). */
  get requests(): RecordedRequest[] {
    return this.server.requests;
  }

  /** Base URL to use as the Drive apiUrl (stands for https://www.googleapis.com). */
  get url(): string {
    return this.#origin;
  }

  /** The endpoints to give the store (ferry's OAuthApp for drive). */
  get app(): { tokenUrl: string; apiUrl: string } {
    return { tokenUrl: this.tokenUrl, apiUrl: this.url };
  }

  async close(): Promise<void> {
    await this.server.close();
  }

  /** Where the fake serves its token endpoint (stands for https://oauth2.googleapis.com/token). */
  get tokenUrl(): string {
    return `${this.#origin}/token`;
  }

  /**
   * The next `count` requests answer as a rate-limited Drive does: 403 userRateLimitExceeded (or
   * rateLimitExceeded), or 429; with Retry-After when given.
   * https://developers.google.com/drive/api/guides/limits and .../handle-errors#resolve_a_403_error_usage_limit_exceeded
   */
  throttleNext(
    count = 1,
    options: { status?: 403 | 429; reason?: string; retryAfter?: number } = {},
  ): undefined {
    const recorded = fixture('drive', options.status === 429 ? 'rate_limit_429' : 'rate_limit_user');
    const body =
      options.reason === undefined ? recorded.body : googleError(recorded, { reason: options.reason });
    const headers: Record<string, string> =
      options.retryAfter === undefined ? {} : { 'retry-after': String(options.retryAfter) };
    this.server.inject({ status: recorded.status, headers, body }, count);
  }

  /** The next `count` requests fail with a server error (500 backendError by default). */
  failNext(count = 1, status = 500): undefined {
    const recorded = fixture('drive', 'error_backend');
    this.server.inject({ status, body: googleError(recorded, { code: status }) }, count);
  }

  // Seeding and inspection helpers for tests (paths walk names from the root).

  put(path: string, content: Buffer | string, mimeType = 'application/octet-stream'): string {
    const segments = path.split('/');
    const name = segments.pop() as string;
    const parent = this.state.ensureFolder(segments.join('/'));
    const existing = this.state
      .children(parent.id)
      .find((f) => f.name === name && f.mimeType !== FOLDER_MIME);
    const bytes = typeof content === 'string' ? Buffer.from(content) : content;
    if (existing) {
      existing.content = bytes;
      existing.modifiedTime = new Date();
      return existing.id;
    }
    return this.state.create({ name, mimeType, parents: [parent.id], content: bytes }).id;
  }

  /** A Google Docs document: listed, but with no size, no md5 and no binary content. */
  putGoogleDoc(path: string): string {
    const segments = path.split('/');
    const name = segments.pop() as string;
    const parent = this.state.ensureFolder(segments.join('/'));
    return this.state.create({ name, mimeType: 'application/vnd.google-apps.document', parents: [parent.id] })
      .id;
  }

  mkdir(path: string): string {
    return this.state.ensureFolder(path).id;
  }

  read(path: string): Buffer | undefined {
    return this.state.lookup(path)?.content;
  }

  /** How many live files named `name` are in the folder at `parentPath`. */
  countNamed(parentPath: string, name: string): number {
    const parent = this.state.lookup(parentPath);
    return parent ? this.state.children(parent.id).filter((f) => f.name === name).length : 0;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.url === '/token') return this.oauth.handleToken(req, res);
    const body = await readBody(req);
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', this.#origin);
    const ctx: RouteContext = {
      req,
      res,
      url,
      body,
      state: this.state,
      origin: this.#origin,
      maxPageSize: this.maxPageSize,
      tamper: (media) => this.server.tamper(req, media),
    };

    if (this.server.takeFault(req, res)) return;

    const uploadId = url.searchParams.get('upload_id');
    // A resumable session URI is its own credential; every other route needs a valid bearer token.
    if (
      !(uploadId && (method === 'PUT' || method === 'DELETE')) &&
      !this.oauth.checkBearer(req.headers.authorization).ok
    ) {
      const recorded = fixture('drive', 'error_unauthorized');
      return sendJson(res, recorded.status, recorded.body, recorded.headers);
    }

    const path = url.pathname;
    const fileRoute = /^\/drive\/v3\/files\/([^/]+)(\/copy)?$/.exec(path);
    const uploadRoute = /^\/upload\/drive\/v3\/files(?:\/([^/]+))?$/.exec(path);
    if (path === '/drive/v3/files') {
      if (method === 'GET') return listFiles(ctx);
      if (method === 'POST') return createFile(ctx);
    } else if (fileRoute) {
      const id = decodeURIComponent(fileRoute[1] as string);
      if (fileRoute[2]) {
        if (method === 'POST') return copyFile(ctx, id);
      } else if (method === 'GET') {
        return getFile(ctx, id);
      } else if (method === 'PATCH') {
        return updateFile(ctx, id);
      } else if (method === 'DELETE') {
        return deleteFile(ctx, id);
      }
    } else if (uploadRoute) {
      const id = uploadRoute[1] === undefined ? undefined : decodeURIComponent(uploadRoute[1]);
      if (uploadId && method === 'PUT') return uploadChunk(ctx, uploadId);
      if (uploadId && method === 'DELETE') return cancelUpload(ctx, uploadId);
      if ((method === 'POST' && id === undefined) || (method === 'PATCH' && id !== undefined))
        return upload(ctx, id);
    }
    sendError(res, 404, 'notFound', `Not Found: ${method} ${path}`);
  }
}
