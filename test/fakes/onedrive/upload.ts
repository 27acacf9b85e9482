// Upload routes of the fake OneDrive: simple upload (PUT …/content, at most 4 MiB) and upload sessions
// (POST …/createUploadSession, then PUT byte ranges to the session's uploadUrl).
import { randomBytes } from 'node:crypto';
import { type Address, itemNotFound, jsonBody, type RouteContext, sendError, sendJson } from './http.js';
import { conflictBehavior, invalidNameAnswer, nameAlreadyExists, resolve, resolveParent } from './items.js';
import type { Item, UploadSession } from './state.js';

/** Simple uploads take at most 4 MiB; larger files need an upload session. */
export const SIMPLE_UPLOAD_LIMIT = 4 * 1024 * 1024;
/** Fragments other than the last must be multiples of 320 KiB, and at most 60 MiB. */
export const FRAGMENT_GRANULE = 320 * 1024;
export const FRAGMENT_MAX = 60 * 1024 * 1024;

/** Creates or replaces `name` in `parent`; undefined after answering a conflict. */
function commit(
  ctx: RouteContext,
  parent: Item,
  name: string,
  content: Buffer,
  behavior: string,
  mimeType: string | undefined,
): { item: Item; created: boolean } | undefined {
  const existing = ctx.state.child(parent.id, name);
  if (existing && (ctx.state.isFolder(existing) || behavior === 'fail')) {
    nameAlreadyExists(ctx);
    return undefined;
  }
  if (existing && behavior === 'replace') {
    existing.content = content;
    existing.mimeType = mimeType ?? existing.mimeType ?? 'application/octet-stream';
    existing.lastModifiedDateTime = new Date();
    existing.version += 1;
    return { item: existing, created: false };
  }
  const finalName = existing ? ctx.state.freeName(parent.id, name) : name;
  return { item: ctx.state.create(parent.id, finalName, content, mimeType), created: true };
}

function writeTarget(ctx: RouteContext, address: Address): { parent: Item; name: string } | undefined {
  if (address.segments.length === 0) {
    // PUT /me/drive/items/{id}/content replaces that file.
    const item = resolve(ctx, address);
    const parent = item?.parentId === undefined ? undefined : ctx.state.items.get(item.parentId);
    if (!item || !parent || ctx.state.isFolder(item)) {
      itemNotFound(ctx.res);
      return undefined;
    }
    return { parent, name: item.name };
  }
  const target = resolveParent(ctx, address);
  if (target === 'not_found') itemNotFound(ctx.res);
  else if (target === 'conflict') nameAlreadyExists(ctx);
  else if (target === 'invalid') invalidNameAnswer(ctx);
  else return target;
  return undefined;
}

// PUT /me/drive/root:/path:/content — https://learn.microsoft.com/graph/api/driveitem-put-content
// 201 Created for a new file, 200 OK for new content of an existing one.
export function simpleUpload(ctx: RouteContext, address: Address): undefined {
  if (ctx.body.length > SIMPLE_UPLOAD_LIMIT) {
    return sendError(
      ctx.res,
      413,
      'requestTooLarge',
      'Simple upload is limited to 4 MB; use an upload session.',
    );
  }
  const target = writeTarget(ctx, address);
  if (!target) return;
  const behavior = conflictBehavior(ctx, {}, 'replace');
  const result = commit(
    ctx,
    target.parent,
    target.name,
    ctx.tamper(ctx.body),
    behavior,
    ctx.req.headers['content-type'],
  );
  if (result) sendJson(ctx.res, result.created ? 201 : 200, ctx.state.toJson(result.item, ctx.origin));
}

// POST /me/drive/root:/path:/createUploadSession — https://learn.microsoft.com/graph/api/driveitem-createuploadsession
export function createSession(ctx: RouteContext, address: Address): undefined {
  const body = jsonBody(ctx);
  if (!body) return;
  const target = writeTarget(ctx, address);
  if (!target) return;
  const item = (body.item ?? {}) as Record<string, unknown>;
  const behavior = conflictBehavior(ctx, item, 'fail');
  if (behavior !== 'fail' && behavior !== 'replace' && behavior !== 'rename') {
    return sendError(ctx.res, 400, 'invalidRequest', `Invalid conflict behavior ${behavior}.`);
  }
  const existing = ctx.state.child(target.parent.id, target.name);
  if (existing && ctx.state.isFolder(existing)) return nameAlreadyExists(ctx);
  const id = randomBytes(18).toString('base64url');
  const session: UploadSession = {
    parentId: target.parent.id,
    name: target.name,
    conflictBehavior: behavior,
    chunks: [],
    received: 0,
    expires: new Date(Date.now() + 60 * 60 * 1000),
  };
  ctx.state.sessions.set(id, session);
  sendJson(ctx.res, 200, {
    uploadUrl: `${ctx.origin}/upload/${id}?tempauth=${randomBytes(12).toString('hex')}`,
    expirationDateTime: session.expires.toISOString(),
    nextExpectedRanges: ['0-'],
  });
}

// PUT <uploadUrl> with Content-Range "bytes a-b/total" — "Upload bytes to the upload session" in
// https://learn.microsoft.com/graph/api/driveitem-createuploadsession. The URL is pre-authenticated:
// "including the Authorization header when issuing the PUT call may result in a 401 Unauthorized".
// 202 with nextExpectedRanges until the last byte, then 201 (new file) or 200 (replaced) with the item.
export function uploadFragment(ctx: RouteContext, id: string): undefined {
  if (ctx.req.headers.authorization !== undefined) {
    return sendError(
      ctx.res,
      401,
      'unauthenticated',
      'The upload URL must be called without an Authorization header.',
    );
  }
  const session = ctx.state.sessions.get(id);
  if (!session) return itemNotFound(ctx.res);
  const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(ctx.req.headers['content-range'] ?? '');
  if (!m) return sendError(ctx.res, 400, 'invalidRequest', 'Content-Range "bytes a-b/total" is required.');
  const start = Number(m[1]);
  const end = Number(m[2]);
  const total = Number(m[3]);
  if (session.total !== undefined && session.total !== total) {
    return sendError(ctx.res, 400, 'invalidRequest', 'The declared file size changed during the upload.');
  }
  session.total = total;
  if (start !== session.received) {
    return sendError(ctx.res, 416, 'invalidRange', `Expected the fragment to start at ${session.received}.`);
  }
  const length = end - start + 1;
  if (length !== ctx.body.length || end >= total) {
    return sendError(ctx.res, 400, 'invalidRequest', 'The Content-Range does not match the body.');
  }
  const last = end + 1 === total;
  if (length > FRAGMENT_MAX || (!last && length % FRAGMENT_GRANULE !== 0)) {
    return sendError(
      ctx.res,
      400,
      'invalidRequest',
      'Fragments must be multiples of 320 KiB and at most 60 MiB.',
    );
  }
  session.chunks.push(ctx.tamper(ctx.body));
  session.received += length;
  if (!last) {
    return sendJson(ctx.res, 202, {
      expirationDateTime: session.expires.toISOString(),
      nextExpectedRanges: [`${session.received}-${total - 1}`],
    });
  }
  ctx.state.sessions.delete(id);
  const parent = ctx.state.items.get(session.parentId);
  if (!parent) return itemNotFound(ctx.res);
  const result = commit(
    ctx,
    parent,
    session.name,
    Buffer.concat(session.chunks),
    session.conflictBehavior,
    undefined,
  );
  if (result) sendJson(ctx.res, result.created ? 201 : 200, ctx.state.toJson(result.item, ctx.origin));
}

// DELETE <uploadUrl> cancels the session — "Cancel the upload session" on the same page.
export function cancelSession(ctx: RouteContext, id: string): undefined {
  if (!ctx.state.sessions.delete(id)) return itemNotFound(ctx.res);
  ctx.res.writeHead(204);
  ctx.res.end();
}
