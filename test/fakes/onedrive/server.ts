// An in-memory Microsoft Graph (OneDrive) on loopback for the store tests: path and id addressing
// under /v1.0/me/drive, paged children, 302 downloads to pre-authenticated URLs, simple uploads and
// upload sessions (whose URL refuses an Authorization header), asynchronous copy with a monitor URL,
// Graph's error bodies, and throttling answers on demand; bodies are filled in from ./fixtures.
// Reference: https://learn.microsoft.com/graph/api/resources/onedrive
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fixture } from '../fixtures.js';
import { FakeOAuth } from '../oauth.js';
import { FakeServer, type RecordedRequest, readBody } from '../server.js';
import { graphError, parseAddress, type RouteContext, sendError, sendJson } from './http.js';
import {
  copyItem,
  createFolder,
  deleteItem,
  download,
  getContent,
  getItem,
  listChildren,
  monitor,
  updateItem,
} from './items.js';
import { type DriveType, OneDriveState } from './state.js';
import { cancelSession, createSession, simpleUpload, uploadFragment } from './upload.js';

export interface FakeOneDriveOptions {
  /** Largest page of children answered, whatever $top asks. Default 200 (Graph's usual page). */
  maxPageSize?: number;
  /** 'personal' reports sha1Hash beside quickXorHash; 'business' only quickXorHash. Default personal. */
  driveType?: DriveType;
  /** Whether uploads by path create missing parent folders (default true). */
  autoCreateParents?: boolean;
  /** The authorization server whose access tokens this API accepts; default: a new rotating one. */
  oauth?: FakeOAuth;
}

export type { RecordedRequest };

export class FakeOneDrive {
  readonly state: OneDriveState;
  readonly oauth: FakeOAuth;
  /** The listener, the request log and the queue of forced answers (inject a fixture there). */
  readonly server = new FakeServer();
  maxPageSize: number;
  autoCreateParents: boolean;
  /**
   * The origin its answers name (download, upload-session and monitor URLs, next links): its own
   * unless a test puts a proxy in front of it, whose origin it then sets here.
   */
  publicOrigin: string | undefined;
  #origin = '';

  private constructor(options: FakeOneDriveOptions) {
    this.state = new OneDriveState(options.driveType ?? 'personal');
    this.oauth =
      options.oauth ?? new FakeOAuth({ rotation: 'rotating', prefix: 'EwB', provider: 'onedrive' });
    this.maxPageSize = options.maxPageSize ?? 200;
    this.autoCreateParents = options.autoCreateParents ?? true;
  }

  static async start(options: FakeOneDriveOptions = {}): Promise<FakeOneDrive> {
    const fake = new FakeOneDrive(options);
    fake.#origin = await fake.server.listen(
      (req, res) => fake.#handle(req, res),
      (err, res) => sendError(res, 500, 'generalException', `fake onedrive: ${String(err)}`),
    );
    return fake;
  }

  /** Every request received (token requests included). */
  get requests(): RecordedRequest[] {
    return this.server.requests;
  }

  /** The Graph base URL, standing for https://graph.microsoft.com/v1.0. */
  get apiUrl(): string {
    return `${this.#origin}/v1.0`;
  }

  /** Stands for https://login.microsoftonline.com/common/oauth2/v2.0/token. */
  get tokenUrl(): string {
    return `${this.#origin}/token`;
  }

  /** The endpoints to give the store (ferry's OAuthApp for onedrive). */
  get app(): { tokenUrl: string; apiUrl: string } {
    return { tokenUrl: this.tokenUrl, apiUrl: this.apiUrl };
  }

  async close(): Promise<void> {
    await this.server.close();
  }

  /**
   * The next `count` requests (of any kind, upload and download URLs included) are throttled: 429
   * activityLimitReached, or 503 serviceNotAvailable, with Retry-After when given.
   * https://learn.microsoft.com/graph/throttling
   */
  throttleNext(count = 1, options: { status?: 429 | 503; retryAfter?: number } = {}): undefined {
    const recorded = fixture('onedrive', options.status === 503 ? 'unavailable_503' : 'throttled_429');
    const headers: Record<string, string> =
      options.retryAfter === undefined ? {} : { 'retry-after': String(options.retryAfter) };
    this.server.inject({ status: recorded.status, headers, body: graphError(recorded, {}) }, count);
  }

  /** The next `count` requests fail with a server error. */
  failNext(count = 1, status = 500): undefined {
    const body = graphError(fixture('onedrive', 'error_not_found'), {
      code: 'generalException',
      message: 'An unspecified error has occurred.',
    });
    this.server.inject({ status, body }, count);
  }

  // Seeding and inspection helpers for tests (paths from the root, "/"-separated, unencoded).

  put(path: string, content: Buffer | string): string {
    const segments = path.split('/');
    const name = segments.pop() as string;
    const parent = this.#ensureFolder(segments);
    const bytes = typeof content === 'string' ? Buffer.from(content) : content;
    const existing = this.state.child(parent.id, name);
    if (existing) {
      existing.content = bytes;
      existing.version += 1;
      return existing.id;
    }
    return this.state.create(parent.id, name, bytes).id;
  }

  mkdir(path: string): string {
    return this.#ensureFolder(path.split('/').filter((s) => s !== '')).id;
  }

  read(path: string): Buffer | undefined {
    return this.state.walk(path.split('/').filter((s) => s !== ''))?.content;
  }

  #ensureFolder(segments: string[]) {
    let current = this.state.root;
    for (const name of segments.filter((s) => s !== '')) {
      current = this.state.child(current.id, name) ?? this.state.create(current.id, name);
    }
    return current;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.url === '/token') return this.oauth.handleToken(req, res);
    const body = await readBody(req);
    const method = req.method ?? 'GET';
    const origin = this.publicOrigin ?? this.#origin;
    const url = new URL(req.url ?? '/', origin);
    const ctx: RouteContext = {
      req,
      res,
      url,
      body,
      state: this.state,
      origin,
      apiBase: `${origin}/v1.0`,
      maxPageSize: this.maxPageSize,
      autoCreateParents: this.autoCreateParents,
      tamper: (content) => this.server.tamper(req, content),
    };

    if (this.server.takeFault(req, res)) return;

    // The raw path, still percent-encoded: names are decoded segment by segment in parseAddress.
    const rawPath = (req.url ?? '/').split('?')[0] as string;
    const pre = /^\/(upload|download|monitor)\/([^/]+)$/.exec(rawPath);
    if (pre) {
      const [, kind, id] = pre as unknown as [string, string, string];
      if (kind === 'upload' && method === 'PUT') return uploadFragment(ctx, id);
      if (kind === 'upload' && method === 'DELETE') return cancelSession(ctx, id);
      if (kind === 'download' && method === 'GET') return download(ctx, id);
      if (kind === 'monitor' && method === 'GET') return monitor(ctx, id);
      return sendError(res, 405, 'invalidRequest', 'Method not allowed.');
    }

    const auth = this.oauth.checkBearer(req.headers.authorization);
    if (!auth.ok) {
      const recorded = fixture('onedrive', 'error_unauthorized');
      const message =
        auth.reason === 'missing'
          ? 'Access token is empty.'
          : auth.reason === 'expired'
            ? undefined
            : 'Access token validation failure. Invalid audience.';
      return sendJson(
        res,
        recorded.status,
        graphError(recorded, message ? { message } : {}),
        recorded.headers,
      );
    }

    const prefix = '/v1.0/me/drive/';
    if (!rawPath.startsWith(prefix))
      return sendError(res, 400, 'invalidRequest', `Unsupported path ${rawPath}`);
    let address: ReturnType<typeof parseAddress>;
    try {
      address = parseAddress(rawPath.slice(prefix.length));
    } catch {
      return sendError(res, 400, 'invalidRequest', 'The request URL is malformed.');
    }
    if (!address) return sendError(res, 400, 'invalidRequest', `Unsupported path ${rawPath}`);

    switch (`${method} ${address.action}`) {
      case 'GET ':
        return getItem(ctx, address);
      case 'PATCH ':
        return updateItem(ctx, address);
      case 'DELETE ':
        return deleteItem(ctx, address);
      case 'GET children':
        return listChildren(ctx, address);
      case 'POST children':
        return createFolder(ctx, address);
      case 'GET content':
        return getContent(ctx, address);
      case 'PUT content':
        return simpleUpload(ctx, address);
      case 'POST createUploadSession':
        return createSession(ctx, address);
      case 'POST copy':
        return copyItem(ctx, address);
      default:
        return sendError(res, 405, 'invalidRequest', `${method} is not supported on this resource.`);
    }
  }
}
