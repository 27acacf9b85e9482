// A fake Dropbox API v2 on loopback for the store tests: two servers, as Dropbox has two hosts: the
// "api" host serves the RPC routes (JSON body in and out) and the token endpoint, the "content" host
// the content-upload and content-download routes (argument in the Dropbox-API-Arg header, HTTP header
// safe JSON). Reference: Dropbox for HTTP Developers,
// https://www.dropbox.com/developers/documentation/http/documentation (cited per route below as "#<route>").
//
// Bearer tokens come from a FakeOAuth (test/fakes/oauth.ts); an unknown one answers 401
// invalid_access_token, an expired one 401 expired_access_token. throttleNext() answers the next
// requests with Dropbox's 429 (Retry-After header + too_many_requests body); pageSize caps list_folder.
// The bodies are filled in from the recorded answers in ./fixtures (see ../fixtures.ts).
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fill, fixture, fixtureBody, part } from '../fixtures.js';
import { FakeOAuth } from '../oauth.js';
import { FakeServer, readBody, sendJson, sendText } from '../server.js';
import { handleContent } from './content.js';
import { BadRequest } from './http.js';
import { DropboxNamespace, metadataOf, RouteError } from './state.js';

export interface FakeDropboxOptions {
  /** Largest list_folder page, whatever `limit` asks (Dropbox: up to 2000). */
  pageSize?: number;
  oauth?: FakeOAuth;
}

export interface CallRecord {
  host: 'api' | 'content';
  route: string;
  /** The raw Dropbox-API-Arg header, for content routes. */
  argHeader?: string;
  arg: unknown;
}

export interface Session {
  owner: string;
  chunks: Buffer[];
  offset: number;
  closed: boolean;
}

export class FakeDropbox {
  readonly oauth: FakeOAuth;
  pageSize: number;
  apiUrl = '';
  contentUrl = '';
  tokenUrl = '';
  readonly calls: CallRecord[] = [];
  /** The listeners, the request log and the queue of forced answers (inject a fixture there). */
  readonly server = new FakeServer();
  readonly namespaces = new Map<string, DropboxNamespace>();
  readonly sessions = new Map<string, Session>();
  /**
   * Awaited by every content request after its token was checked and before it is served: a test holds
   * downloads here to change the location while operations are in flight.
   */
  hold: (() => Promise<void>) | undefined;

  constructor(options: FakeDropboxOptions = {}) {
    this.oauth = options.oauth ?? new FakeOAuth({ rotation: 'stable', prefix: 'sl.', provider: 'dropbox' });
    this.pageSize = options.pageSize ?? 2000;
  }

  async start(): Promise<this> {
    const api = await this.#listen('api');
    const content = await this.#listen('content');
    this.apiUrl = api;
    this.contentUrl = content;
    this.tokenUrl = `${api}/oauth2/token`;
    return this;
  }

  /** The endpoints to give the store (ferry's OAuthApp for dropbox). */
  get app(): { tokenUrl: string; apiUrl: string; contentUrl: string } {
    return { tokenUrl: this.tokenUrl, apiUrl: this.apiUrl, contentUrl: this.contentUrl };
  }

  namespace(owner: string): DropboxNamespace {
    let ns = this.namespaces.get(owner);
    if (!ns) {
      ns = new DropboxNamespace();
      this.namespaces.set(owner, ns);
    }
    return ns;
  }

  /** The next `count` API requests answer 429 too_many_requests with Retry-After: `retryAfter`. */
  throttleNext(count: number, retryAfter = 3): void {
    // "Errors": 429 "Your app is making too many requests"; body is a RateLimitError.
    const recorded = fixture('dropbox', 'rate_limit');
    const body = fixtureBody('dropbox', 'rate_limit');
    this.server.inject(
      {
        status: recorded.status,
        headers: { 'retry-after': String(retryAfter) },
        body: fill(body, { error: fill(part(body, 'error'), { retry_after: retryAfter }) }),
      },
      count,
    );
  }

  /** The next `count` API requests answer `status` (a 5xx) with Dropbox's plain-text body. */
  failNext(count: number, status = 503): void {
    this.server.inject({ status, text: 'Service Unavailable' }, count);
  }

  async close(): Promise<void> {
    await this.server.close();
  }

  #listen(host: 'api' | 'content'): Promise<string> {
    return this.server.listen(
      (req, res) => this.#handle(host, req, res),
      (err, res) => sendText(res, 500, `fake dropbox: ${String(err)}`),
    );
  }

  async #handle(host: 'api' | 'content', req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    // OAuth guide, "Refresh token": POST https://api.dropboxapi.com/oauth2/token
    if (host === 'api' && url.pathname === '/oauth2/token') return this.oauth.handleToken(req, res);

    const body = await readBody(req);
    const route = url.pathname.replace(/^\/2\//, '');
    if (this.server.takeFault(req, res)) return;
    if (req.method !== 'POST') return sendText(res, 405, 'Method Not Allowed');

    // "Authorization": a bad or expired token answers 401 with an AuthError body.
    const bearer = this.oauth.checkBearer(req.headers.authorization);
    if (!bearer.ok) {
      if (bearer.reason === 'missing') {
        return sendText(res, 400, 'Error in call to API function: Missing "Authorization" header.');
      }
      const recorded = fixture(
        'dropbox',
        bearer.reason === 'expired' ? 'error_expired_token' : 'error_invalid_token',
      );
      return sendJson(res, recorded.status, recorded.body);
    }
    const ns = this.namespace(bearer.owner);

    const isContent = CONTENT_ROUTES.has(route);
    if (!isContent && !RPC_ROUTES.has(route)) return sendText(res, 404, `Unknown API function: "${route}"`);
    if (isContent !== (host === 'content')) {
      return sendText(res, 400, `Error in call to API function "${route}": wrong host for this route.`);
    }
    try {
      if (isContent) {
        await this.hold?.();
        const header = req.headers['dropbox-api-arg'];
        const raw = Array.isArray(header) ? header[0] : header;
        const arg = parseArg(route, raw);
        this.calls.push({ host, route, arg, ...(raw === undefined ? {} : { argHeader: raw }) });
        return handleContent({ fake: this, ns, owner: bearer.owner, route, arg, body, req, res });
      }
      if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) {
        throw new BadRequest(`Error in call to API function "${route}": Bad HTTP "Content-Type" header.`);
      }
      const arg = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      this.calls.push({ host, route, arg });
      return sendJson(res, 200, this.#rpc(ns, route, arg));
    } catch (err) {
      if (err instanceof RouteError) return sendJson(res, 409, err.body);
      if (err instanceof BadRequest || err instanceof SyntaxError) {
        return sendText(res, 400, `Error in call to API function "${route}": ${err.message}`);
      }
      throw err;
    }
  }

  #rpc(ns: DropboxNamespace, route: string, arg: Record<string, unknown>): unknown {
    switch (route) {
      // #files-list_folder: {path, recursive, limit} -> {entries, cursor, has_more}
      case 'files/list_folder': {
        const path = ns.check('path', arg.path, true);
        ns.list(path, arg.recursive === true); // not_found / not_folder now, not on continue
        const limit = typeof arg.limit === 'number' ? arg.limit : 2000;
        return this.#page(ns, {
          p: path,
          r: arg.recursive === true,
          o: 0,
          l: Math.min(limit, this.pageSize),
        });
      }
      // #files-list_folder-continue: {cursor}
      case 'files/list_folder/continue': {
        let cursor: Cursor;
        try {
          cursor = JSON.parse(Buffer.from(String(arg.cursor), 'base64url').toString('utf8')) as Cursor;
        } catch {
          throw new RouteError('path', ['reset']);
        }
        return this.#page(ns, cursor);
      }
      // #files-get_metadata: {path} -> Metadata
      case 'files/get_metadata':
        return metadataOf(ns.get('path', ns.check('path', arg.path)));
      // #files-create_folder_v2: {path} -> {metadata}
      case 'files/create_folder_v2':
        return { metadata: metadataOf(ns.createFolder(ns.check('path', arg.path)), false) };
      // #files-delete_v2: {path, parent_rev?} -> {metadata}
      case 'files/delete_v2': {
        const path = ns.check('path_lookup', arg.path);
        const parentRev = typeof arg.parent_rev === 'string' ? arg.parent_rev : undefined;
        return { metadata: metadataOf(ns.delete(path, parentRev)) };
      }
      // #files-copy_v2 / #files-move_v2: {from_path, to_path, autorename} -> {metadata}
      case 'files/copy_v2':
      case 'files/move_v2': {
        const from = ns.check('from_lookup', arg.from_path);
        const to = ns.check('to', arg.to_path);
        return { metadata: metadataOf(ns.relocate(from, to, route === 'files/move_v2')) };
      }
      // #users-get_current_account (argument null)
      default:
        return { account_id: 'dbid:fake', name: { display_name: 'Fake' } };
    }
  }

  #page(ns: DropboxNamespace, cursor: Cursor): unknown {
    let all: ReturnType<DropboxNamespace['list']>;
    try {
      all = ns.list(cursor.p, cursor.r);
    } catch {
      throw new RouteError('path', ['reset']);
    }
    const entries = all.slice(cursor.o, cursor.o + cursor.l).map((node) => metadataOf(node));
    const next: Cursor = { ...cursor, o: cursor.o + entries.length };
    return fill(fixtureBody('dropbox', 'list_folder'), {
      entries,
      cursor: Buffer.from(JSON.stringify(next)).toString('base64url'),
      has_more: next.o < all.length,
    });
  }

  newSession(owner: string): string {
    const id = `pid_upload_session:${randomBytes(12).toString('base64url')}`;
    this.sessions.set(id, { owner, chunks: [], offset: 0, closed: false });
    return id;
  }
}

interface Cursor {
  p: string;
  r: boolean;
  o: number;
  l: number;
}

const RPC_ROUTES = new Set([
  'files/list_folder',
  'files/list_folder/continue',
  'files/get_metadata',
  'files/create_folder_v2',
  'files/delete_v2',
  'files/copy_v2',
  'files/move_v2',
  'users/get_current_account',
]);

const CONTENT_ROUTES = new Set([
  'files/upload',
  'files/upload_session/start',
  'files/upload_session/append_v2',
  'files/upload_session/finish',
  'files/download',
]);

/**
 * JSON encoding page (https://www.dropbox.com/developers/reference/json-encoding): the header must be
 * HTTP header safe, i.e. 0x7F and non-ASCII written as \uXXXX. Node reads header bytes as latin1, so a
 * raw UTF-8 byte shows up here as a character above 0x7E.
 */
function parseArg(route: string, raw: string | undefined): Record<string, unknown> {
  if (raw === undefined) throw new BadRequest('Missing "Dropbox-API-Arg" header.');
  if (/[^\x20-\x7e]/.test(raw)) {
    throw new BadRequest(`HTTP header "Dropbox-API-Arg": could not decode input as JSON (${route}).`);
  }
  const arg = JSON.parse(raw) as unknown;
  if (typeof arg !== 'object' || arg === null) throw new BadRequest('"Dropbox-API-Arg" must be an object.');
  return arg as Record<string, unknown>;
}
