// A fake Box API 2.0 on loopback for the store tests, on two servers as Box has two hosts: the api
// host (https://api.box.com: /oauth2/token and /2.0/...) and the upload host
// (https://upload.box.com/api/2.0/...), which here also serves the short-lived download URLs that
// GET /files/{id}/content redirects to (dl.boxcloud.com in real life). Every route names its page of
// the Box API reference (https://developer.box.com/reference/).
//
// Bearer tokens come from a FakeOAuth with single-use refresh tokens (Box rotates them on every
// refresh); an unknown or expired one answers 401 with an empty body and WWW-Authenticate.
// throttleNext() answers Box's 429 rate_limit_exceeded with Retry-After; pageSize caps folder pages.
// List pages, errors and the 401 are filled in from the recorded answers in ./fixtures.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fill, fixture, fixtureBody } from '../fixtures.js';
import { FakeOAuth } from '../oauth.js';
import { FakeServer, parseRange, readBody, sendJson } from '../server.js';
import { BoxApiError, BoxTree, resourceOf } from './state.js';
import { handleUpload, type UploadSession } from './uploads.js';

export interface FakeBoxOptions {
  /** Largest page of folder items, whatever `limit` asks (Box: 1000). */
  pageSize?: number;
  /** part_size of upload sessions (Box: 8 MiB for most files). */
  partSize?: number;
  /** Smallest file_size an upload session accepts (Box: 20 000 000 bytes). */
  minSessionSize?: number;
  oauth?: FakeOAuth;
}

export interface BoxCall {
  host: 'api' | 'upload' | 'download';
  method: string;
  path: string;
  /** Whether an Authorization header came with the request. */
  authorized: boolean;
}

export class FakeBox {
  readonly oauth: FakeOAuth;
  pageSize: number;
  partSize: number;
  minSessionSize: number;
  apiUrl = '';
  uploadUrl = '';
  tokenUrl = '';
  readonly calls: BoxCall[] = [];
  /** The listeners, the request log and the queue of forced answers (inject a fixture there). */
  readonly server = new FakeServer();
  readonly trees = new Map<string, BoxTree>();
  readonly sessions = new Map<string, UploadSession>();
  /** Commits answered 202 (Retry-After: 0) before the next one succeeds. */
  commitPending = 0;
  readonly #downloads = new Map<string, { owner: string; fileId: string }>();

  constructor(options: FakeBoxOptions = {}) {
    this.oauth = options.oauth ?? new FakeOAuth({ rotation: 'single-use', provider: 'box' });
    this.pageSize = options.pageSize ?? 1000;
    this.partSize = options.partSize ?? 8 * 1024 * 1024;
    this.minSessionSize = options.minSessionSize ?? 20_000_000;
  }

  async start(): Promise<this> {
    const api = await this.#listen('api');
    const upload = await this.#listen('upload');
    this.apiUrl = api;
    this.uploadUrl = `${upload}/api`;
    this.tokenUrl = `${api}/oauth2/token`;
    return this;
  }

  /** The endpoints to give the store (ferry's OAuthApp for box: uploads on the content URL). */
  get app(): { tokenUrl: string; apiUrl: string; contentUrl: string } {
    return { tokenUrl: this.tokenUrl, apiUrl: this.apiUrl, contentUrl: this.uploadUrl };
  }

  tree(owner: string): BoxTree {
    let tree = this.trees.get(owner);
    if (!tree) {
      tree = new BoxTree();
      this.trees.set(owner, tree);
    }
    return tree;
  }

  /** The next `count` API requests answer 429 rate_limit_exceeded with Retry-After: `retryAfter`. */
  throttleNext(count: number, retryAfter = 2): void {
    // "Rate limits" (guides/api-calls/permissions-and-errors/rate-limits): 429 + Retry-After.
    const recorded = fixture('box', 'rate_limit');
    this.server.inject(
      {
        status: recorded.status,
        headers: { 'retry-after': String(retryAfter) },
        body: fill(fixtureBody('box', 'rate_limit'), { request_id: randomBytes(6).toString('hex') }),
      },
      count,
    );
  }

  async close(): Promise<void> {
    await this.server.close();
  }

  #listen(host: 'api' | 'upload'): Promise<string> {
    return this.server.listen(
      (req, res) => this.#handle(host, req, res),
      (err, res) =>
        sendError(
          res,
          err instanceof BoxApiError ? err : new BoxApiError(500, 'internal_server_error', String(err)),
        ),
    );
  }

  async #handle(host: 'api' | 'upload', req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = req.method ?? 'GET';
    // "Refresh access token": POST https://api.box.com/oauth2/token (reference: post-oauth2-token)
    if (host === 'api' && url.pathname === '/oauth2/token') return this.oauth.handleToken(req, res);

    const body = await readBody(req);
    const downloadMatch = host === 'upload' ? /^\/dl\/([\w-]+)$/.exec(url.pathname) : null;
    this.calls.push({
      host: downloadMatch ? 'download' : host,
      method,
      path: url.pathname,
      authorized: req.headers.authorization !== undefined,
    });
    if (downloadMatch?.[1]) return this.#serveDownload(downloadMatch[1], req, res);

    if (this.server.takeFault(req, res)) return;
    const bearer = this.oauth.checkBearer(req.headers.authorization);
    if (!bearer.ok) {
      // "Common errors", 401 Unauthorized: an empty body, the reason in WWW-Authenticate.
      const recorded = fixture('box', 'error_unauthorized');
      const header = recorded.headers['www-authenticate'] ?? '';
      const challenge =
        bearer.reason === 'missing'
          ? header.replace(/error_description="[^"]*"/, 'error_description="The access token is missing."')
          : header;
      return sendJson(res, recorded.status, recorded.body, { 'www-authenticate': challenge });
    }
    const tree = this.tree(bearer.owner);
    const path = url.pathname;
    if (host === 'upload') {
      if (!path.startsWith('/api/2.0/')) throw new BoxApiError(404, 'not_found', 'Not Found');
      return handleUpload({
        fake: this,
        tree,
        owner: bearer.owner,
        method,
        path: path.slice('/api/2.0'.length),
        url,
        req,
        body,
        res,
      });
    }
    if (!path.startsWith('/2.0/')) throw new BoxApiError(404, 'not_found', 'Not Found');
    return this.#api(tree, bearer.owner, method, path.slice('/2.0'.length), url, body, res);
  }

  #api(
    tree: BoxTree,
    owner: string,
    method: string,
    path: string,
    url: URL,
    body: Buffer,
    res: ServerResponse,
  ) {
    const fields = url.searchParams.get('fields')?.split(',');
    const json = () => (body.length ? (JSON.parse(body.toString('utf8')) as Record<string, unknown>) : {});
    let m: RegExpExecArray | null;
    // "List items in folder": GET /folders/{folder_id}/items (limit, offset | usemarker + marker, fields)
    m = method === 'GET' ? /^\/folders\/(\w+)\/items$/.exec(path) : null;
    if (m) {
      const all = tree.children(m[1] as string);
      const limit = Math.min(Number(url.searchParams.get('limit') ?? 100), 1000, this.pageSize);
      const useMarker = url.searchParams.get('usemarker') === 'true';
      const marker = url.searchParams.get('marker');
      const start = useMarker
        ? marker
          ? Number(Buffer.from(marker, 'base64url').toString())
          : 0
        : Number(url.searchParams.get('offset') ?? 0);
      const entries = all
        .slice(start, start + limit)
        .map((n) => resourceOf(n, fields ?? ['type', 'id', 'sequence_id', 'etag', 'name']));
      const end = start + entries.length;
      if (useMarker) {
        return sendJson(
          res,
          200,
          fill(fixtureBody('box', 'folder_items_marker'), {
            entries,
            limit,
            next_marker: end < all.length ? Buffer.from(String(end)).toString('base64url') : null,
            prev_marker: undefined,
          }),
        );
      }
      return sendJson(
        res,
        200,
        fill(fixtureBody('box', 'folder_items'), {
          total_count: all.length,
          entries,
          offset: start,
          limit,
          order: [{ by: 'type', direction: 'ASC' }],
        }),
      );
    }
    // "Create folder": POST /folders {name, parent: {id}} -> 201 Folder
    if (method === 'POST' && path === '/folders') {
      const arg = json();
      const parent = (arg.parent ?? {}) as { id?: unknown };
      return sendJson(res, 201, resourceOf(tree.createFolder(String(parent.id), arg.name as string), fields));
    }
    // "Get file information": GET /files/{file_id}
    m = method === 'GET' ? /^\/files\/(\w+)$/.exec(path) : null;
    if (m) {
      return sendJson(res, 200, resourceOf(tree.get(m[1] as string, 'file'), fields));
    }
    // "Download file": GET /files/{file_id}/content -> 302 Location: a short-lived download URL
    m = method === 'GET' ? /^\/files\/(\w+)\/content$/.exec(path) : null;
    if (m) {
      const file = tree.get(m[1] as string, 'file');
      const token = randomBytes(16).toString('base64url');
      this.#downloads.set(token, { owner, fileId: file.id });
      const uploadOrigin = this.uploadUrl.replace(/\/api$/, '');
      res.writeHead(302, { location: `${uploadOrigin}/dl/${token}`, 'content-length': 0 });
      return void res.end();
    }
    // "Delete file": DELETE /files/{file_id} -> 204
    m = method === 'DELETE' ? /^\/files\/(\w+)$/.exec(path) : null;
    if (m) {
      tree.delete(m[1] as string);
      res.writeHead(204);
      return void res.end();
    }
    // "Copy file": POST /files/{file_id}/copy {parent: {id}, name?} -> 201 File
    m = method === 'POST' ? /^\/files\/(\w+)\/copy$/.exec(path) : null;
    if (m) {
      const arg = json();
      const parent = (arg.parent ?? {}) as { id?: unknown };
      const name = typeof arg.name === 'string' ? arg.name : undefined;
      return sendJson(
        res,
        201,
        resourceOf(tree.relocate(m[1] as string, String(parent.id), name, true), fields),
      );
    }
    // "Update file": PUT /files/{file_id} {parent: {id}, name} moves or renames -> 200 File
    m = method === 'PUT' ? /^\/files\/(\w+)$/.exec(path) : null;
    if (m) {
      const arg = json();
      const file = tree.get(m[1] as string, 'file');
      const parent = (arg.parent ?? { id: file.parentId }) as { id?: unknown };
      const name = typeof arg.name === 'string' ? arg.name : undefined;
      return sendJson(res, 200, resourceOf(tree.relocate(file.id, String(parent.id), name, false), fields));
    }
    throw new BoxApiError(404, 'not_found', `Not Found: ${method} ${path}`);
  }

  /** The file a download URL's token (the last segment of its path) stands for, while it is live. */
  downloadOf(token: string): { owner: string; name: string } | undefined {
    const grant = this.#downloads.get(token);
    const file = grant ? this.trees.get(grant.owner)?.items.get(grant.fileId) : undefined;
    return grant && file ? { owner: grant.owner, name: file.name } : undefined;
  }

  /** The download URL: no bearer needed; Range honoured (206). */
  #serveDownload(token: string, req: IncomingMessage, res: ServerResponse): void {
    const grant = this.#downloads.get(token);
    const file = grant ? this.trees.get(grant.owner)?.items.get(grant.fileId) : undefined;
    if (!file) throw new BoxApiError(404, 'not_found', 'Not Found');
    const size = file.content.length;
    const range = parseRange(req.headers.range, size);
    if (range === 'unsatisfiable') {
      res.writeHead(416, { 'content-range': `bytes */${size}`, 'content-length': 0 });
      return void res.end();
    }
    if (range) {
      res.writeHead(206, {
        'content-type': 'application/octet-stream',
        'content-range': `bytes ${range.start}-${range.end}/${size}`,
        'content-length': range.end - range.start + 1,
      });
      return void res.end(file.content.subarray(range.start, range.end + 1));
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': size });
    res.end(file.content);
  }
}

/** "Client error" resource: {type: "error", status, code, message, context_info, help_url, request_id}. */
export function sendError(res: ServerResponse, err: BoxApiError): void {
  const values: Record<string, unknown> = {
    status: err.status,
    code: err.code,
    message: err.message,
    request_id: randomBytes(6).toString('hex'),
  };
  // The conflict fixture is the one that records context_info.
  const template = fixtureBody('box', err.contextInfo === undefined ? 'error_not_found' : 'error_conflict');
  if (err.contextInfo !== undefined) values.context_info = err.contextInfo;
  sendJson(res, err.status, fill(template, values));
}
