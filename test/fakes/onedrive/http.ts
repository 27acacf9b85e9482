// Response helpers of the fake OneDrive, and the parser of Graph's item addressing.
// Error shape (https://learn.microsoft.com/graph/errors):
//   {"error": {"code": "itemNotFound", "message": "…", "innerError": {"date", "request-id"}}}
// Addressing (https://learn.microsoft.com/graph/onedrive-addressing-driveitems):
//   /me/drive/root, /me/drive/root:/path/to/item(:), /me/drive/items/{id}, /me/drive/items/{id}:/rel/path:
//   followed by an optional action: /children, /content, /createUploadSession, /copy.
// Error bodies are filled in from the recorded answers in ./fixtures.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Fixture, fill, fixture, part } from '../fixtures.js';
import { parseJsonObject, sendJson } from '../server.js';
import type { OneDriveState } from './state.js';

export interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  body: Buffer;
  state: OneDriveState;
  /** Origin the fake is reached at (upload, download and monitor URLs live here): FakeOneDrive.publicOrigin. */
  origin: string;
  /** The Graph base the fake serves: origin + "/v1.0". */
  apiBase: string;
  maxPageSize: number;
  /** Whether PUT content and upload sessions create missing parent folders. */
  autoCreateParents: boolean;
  /** An upload's content as received: with a byte flipped when a test armed a corruption (FakeServer.tamper). */
  tamper: (content: Buffer) => Buffer;
}

export { sendJson };

/** A recorded Graph error body with its code and message replaced, and a fresh innerError. */
export function graphError(
  recorded: Fixture,
  values: { code?: string; message?: string },
): Record<string, unknown> {
  const body = recorded.body as Record<string, unknown>;
  const error = part(body, 'error');
  const inner = part(error, 'innerError');
  const id = randomUUID();
  return fill(body, {
    error: fill(error, {
      code: values.code ?? error.code,
      message: values.message ?? error.message,
      innerError: fill(inner, {
        date: new Date().toISOString().replace(/\.\d{3}Z$/, ''),
        'request-id': id,
        'client-request-id': id,
      }),
    }),
  });
}

export function sendError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): undefined {
  sendJson(res, status, graphError(fixture('onedrive', 'error_not_found'), { code, message }), headers);
}

export function itemNotFound(res: ServerResponse): undefined {
  sendError(res, 404, 'itemNotFound', 'The resource could not be found.');
}

export function jsonBody(ctx: RouteContext): Record<string, unknown> | undefined {
  const parsed = parseJsonObject(ctx.body);
  if (parsed === undefined) sendError(ctx.res, 400, 'invalidRequest', 'Invalid request body.');
  return parsed;
}

export interface Address {
  /** 'root' or an item id the path starts from. */
  base: { kind: 'root' } | { kind: 'id'; id: string };
  /** Decoded path segments after "root:" or "items/{id}:" (empty when addressed directly). */
  segments: string[];
  action: '' | 'children' | 'content' | 'createUploadSession' | 'copy';
}

const ACTIONS = new Set(['', 'children', 'content', 'createUploadSession', 'copy']);

/**
 * Parses the raw (still percent-encoded) URL path after /v1.0/me/drive/. Path segments are split on
 * "/" first and percent-decoded one by one, so %2F stays inside a name and a raw "#" or "?" never
 * reaches here (the client that forgot to encode them sent a shorter path). Throws on a malformed
 * address.
 */
export function parseAddress(rawRest: string): Address | undefined {
  let rest = rawRest;
  let base: Address['base'];
  if (rest === 'root' || rest.startsWith('root:') || rest.startsWith('root/')) {
    base = { kind: 'root' };
    rest = rest.slice(4);
  } else if (rest.startsWith('items/')) {
    const m = /^items\/([^/:]+)/.exec(rest);
    if (!m) return undefined;
    base = { kind: 'id', id: decodeURIComponent(m[1] as string) };
    rest = rest.slice(m[0].length);
  } else {
    return undefined;
  }
  let segments: string[] = [];
  if (rest.startsWith(':/')) {
    const close = rest.indexOf(':', 2);
    const rawPath = close < 0 ? rest.slice(2) : rest.slice(2, close);
    rest = close < 0 ? '' : rest.slice(close + 1);
    const rawSegments = rawPath.split('/');
    if (rawSegments.some((s) => s === '')) throw new Error('empty path segment');
    segments = rawSegments.map((s) => decodeURIComponent(s));
  } else if (rest === ':') {
    rest = '';
  }
  if (rest !== '' && !rest.startsWith('/')) return undefined;
  const action = rest.slice(1);
  if (!ACTIONS.has(action)) return undefined;
  return { base, segments, action: action as Address['action'] };
}
