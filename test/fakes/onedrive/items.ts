// Item routes of the fake OneDrive: get, list children (paged), create folder, delete, move/rename,
// copy (asynchronous, with a monitor URL), and download (302 to a pre-authenticated URL).
import { randomBytes } from 'node:crypto';
import { fill, fixtureBody } from '../fixtures.js';
import { type Address, itemNotFound, jsonBody, type RouteContext, sendError, sendJson } from './http.js';
import { type CopyResult, type Item, invalidName } from './state.js';

/** The item an address names, or undefined (answers nothing). */
export function resolve(ctx: RouteContext, address: Address): Item | undefined {
  const base = address.base.kind === 'root' ? ctx.state.root : ctx.state.items.get(address.base.id);
  if (!base) return undefined;
  return ctx.state.walk(address.segments, base);
}

/** For writes: the parent folder of an address and the last name (parents made when allowed). */
export function resolveParent(
  ctx: RouteContext,
  address: Address,
): { parent: Item; name: string } | 'not_found' | 'conflict' | 'invalid' {
  const base = address.base.kind === 'root' ? ctx.state.root : ctx.state.items.get(address.base.id);
  if (!base || address.segments.length === 0) return 'not_found';
  const names = address.segments.slice(0, -1);
  const name = address.segments.at(-1) as string;
  if (address.segments.some(invalidName)) return 'invalid';
  let parent = base;
  for (const segment of names) {
    const next = ctx.state.child(parent.id, segment);
    if (next && !ctx.state.isFolder(next)) return 'conflict';
    if (!next && !ctx.autoCreateParents) return 'not_found';
    parent = next ?? ctx.state.create(parent.id, segment);
  }
  return { parent, name };
}

export function conflictBehavior(ctx: RouteContext, body: Record<string, unknown>, fallback: string): string {
  const fromBody = body['@microsoft.graph.conflictBehavior'];
  const fromQuery = ctx.url.searchParams.get('@microsoft.graph.conflictBehavior');
  return typeof fromBody === 'string' ? fromBody : (fromQuery ?? fallback);
}

export function nameAlreadyExists(ctx: RouteContext): undefined {
  sendError(ctx.res, 409, 'nameAlreadyExists', 'The specified item name already exists.');
}

export function invalidNameAnswer(ctx: RouteContext): undefined {
  sendError(ctx.res, 400, 'invalidRequest', 'The provided name contains invalid characters.');
}

// GET /me/drive/root:/path: and /me/drive/items/{id} — https://learn.microsoft.com/graph/api/driveitem-get
export function getItem(ctx: RouteContext, address: Address): undefined {
  const item = resolve(ctx, address);
  if (!item) return itemNotFound(ctx.res);
  sendJson(ctx.res, 200, ctx.state.toJson(item, ctx.origin, true));
}

// GET …/children — https://learn.microsoft.com/graph/api/driveitem-list-children
// Paged with $top and an opaque $skiptoken carried in @odata.nextLink (https://learn.microsoft.com/graph/paging).
export function listChildren(ctx: RouteContext, address: Address): undefined {
  const item = resolve(ctx, address);
  if (!item) return itemNotFound(ctx.res);
  const top = Number(ctx.url.searchParams.get('$top') ?? '200');
  if (!Number.isInteger(top) || top < 1) return sendError(ctx.res, 400, 'invalidRequest', 'Invalid $top.');
  const skip = Number(ctx.url.searchParams.get('$skiptoken') ?? '0');
  const size = Math.min(top, ctx.maxPageSize);
  const all = ctx.state.isFolder(item) ? ctx.state.children(item.id) : [];
  const page = all.slice(skip, skip + size);
  let nextLink: string | undefined;
  if (skip + size < all.length) {
    const next = new URL(ctx.url.toString());
    next.searchParams.set('$skiptoken', String(skip + size));
    nextLink = next.toString();
  }
  const body = fill(fixtureBody('onedrive', 'children'), {
    '@odata.context': `${ctx.apiBase}/$metadata#users('me')/drive/items`,
    value: page.map((i) => ctx.state.toJson(i, ctx.origin)),
    '@odata.nextLink': nextLink,
  });
  sendJson(ctx.res, 200, body);
}

// POST …/children with {name, folder: {}} — https://learn.microsoft.com/graph/api/driveitem-post-children
export function createFolder(ctx: RouteContext, address: Address): undefined {
  const parent = resolve(ctx, address);
  if (!parent || !ctx.state.isFolder(parent)) return itemNotFound(ctx.res);
  const body = jsonBody(ctx);
  if (!body) return;
  if (typeof body.name !== 'string' || body.folder === undefined) {
    return sendError(ctx.res, 400, 'invalidRequest', 'A folder needs a name and a folder facet.');
  }
  if (invalidName(body.name)) return invalidNameAnswer(ctx);
  const behavior = conflictBehavior(ctx, body, 'fail');
  let name = body.name;
  const existing = ctx.state.child(parent.id, name);
  if (existing) {
    if (behavior === 'fail') return nameAlreadyExists(ctx);
    if (behavior === 'rename') name = ctx.state.freeName(parent.id, name);
    else ctx.state.delete(existing.id);
  }
  sendJson(ctx.res, 201, ctx.state.toJson(ctx.state.create(parent.id, name), ctx.origin));
}

// DELETE /me/drive/items/{id} or root:/path: — https://learn.microsoft.com/graph/api/driveitem-delete
export function deleteItem(ctx: RouteContext, address: Address): undefined {
  const item = resolve(ctx, address);
  if (!item) return itemNotFound(ctx.res);
  if (item.parentId === undefined)
    return sendError(ctx.res, 403, 'accessDenied', 'The root cannot be deleted.');
  ctx.state.delete(item.id);
  ctx.res.writeHead(204);
  ctx.res.end();
}

function targetParent(ctx: RouteContext, ref: unknown): Item | undefined {
  if (!ref || typeof ref !== 'object') return undefined;
  const { id, path } = ref as { id?: unknown; path?: unknown };
  if (typeof id === 'string') return ctx.state.items.get(id);
  if (typeof path === 'string') {
    const m = /^\/drive\/root:?(.*)$/.exec(path);
    if (!m) return undefined;
    const segments = (m[1] as string)
      .split('/')
      .filter((s) => s !== '')
      .map(decodeURIComponent);
    return ctx.state.walk(segments);
  }
  return undefined;
}

// PATCH /me/drive/items/{id} with {name, parentReference} — move and rename:
// https://learn.microsoft.com/graph/api/driveitem-move and https://learn.microsoft.com/graph/api/driveitem-update
export function updateItem(ctx: RouteContext, address: Address): undefined {
  const item = resolve(ctx, address);
  if (!item) return itemNotFound(ctx.res);
  const body = jsonBody(ctx);
  if (!body) return;
  let parent = ctx.state.items.get(item.parentId ?? '') as Item;
  if (body.parentReference !== undefined) {
    const target = targetParent(ctx, body.parentReference);
    if (!target || !ctx.state.isFolder(target)) return itemNotFound(ctx.res);
    parent = target;
  }
  const name = typeof body.name === 'string' ? body.name : item.name;
  if (invalidName(name)) return invalidNameAnswer(ctx);
  const existing = ctx.state.child(parent.id, name);
  if (existing && existing.id !== item.id) {
    const behavior = conflictBehavior(ctx, body, 'fail');
    if (behavior === 'fail') return nameAlreadyExists(ctx);
    ctx.state.delete(existing.id);
  }
  item.parentId = parent.id;
  item.name = name;
  item.version += 1;
  sendJson(ctx.res, 200, ctx.state.toJson(item, ctx.origin));
}

// POST …/copy with {parentReference, name} — https://learn.microsoft.com/graph/api/driveitem-copy
// Answers 202 with a monitor URL (https://learn.microsoft.com/graph/long-running-actions-overview);
// the copy is made when the monitor reports it complete (the second poll), to exercise polling.
export function copyItem(ctx: RouteContext, address: Address): undefined {
  const source = resolve(ctx, address);
  if (!source) return itemNotFound(ctx.res);
  const body = jsonBody(ctx);
  if (!body) return;
  const parent =
    body.parentReference === undefined
      ? ctx.state.items.get(source.parentId ?? '')
      : targetParent(ctx, body.parentReference);
  if (!parent || !ctx.state.isFolder(parent)) return itemNotFound(ctx.res);
  const name = typeof body.name === 'string' ? body.name : source.name;
  if (invalidName(name)) return invalidNameAnswer(ctx);
  const behavior = conflictBehavior(ctx, {}, 'fail');
  const jobId = randomBytes(12).toString('hex');
  const run = (): CopyResult => {
    const existing = ctx.state.child(parent.id, name);
    let finalName = name;
    if (existing) {
      if (behavior === 'fail') {
        return {
          status: 'failed',
          code: 'nameAlreadyExists',
          message: 'The specified item name already exists.',
        };
      }
      if (behavior === 'rename') finalName = ctx.state.freeName(parent.id, name);
      else ctx.state.delete(existing.id);
    }
    const copy = ctx.state.create(
      parent.id,
      finalName,
      source.content === undefined ? undefined : Buffer.from(source.content),
      source.mimeType,
    );
    return { status: 'completed', resourceId: copy.id };
  };
  ctx.state.copies.set(jobId, { polls: 0, run });
  ctx.res.writeHead(202, { location: `${ctx.origin}/monitor/${jobId}`, 'content-length': 0 });
  ctx.res.end();
}

// GET <monitor URL> — asyncJobStatus (https://learn.microsoft.com/graph/api/resources/asyncjobstatus):
// 202 inProgress on the first poll, then completed with the new item's resourceId, or failed.
export function monitor(ctx: RouteContext, jobId: string): undefined {
  const job = ctx.state.copies.get(jobId);
  if (!job) return itemNotFound(ctx.res);
  job.polls += 1;
  const status = { '@odata.type': '#microsoft.graph.asyncJobStatus', operation: 'ItemCopy' };
  if (job.polls === 1)
    return sendJson(ctx.res, 202, { ...status, status: 'inProgress', percentageComplete: 50 });
  job.result ??= job.run();
  if (job.result.status === 'completed') {
    return sendJson(ctx.res, 200, {
      ...status,
      status: 'completed',
      percentageComplete: 100,
      resourceId: job.result.resourceId,
    });
  }
  sendJson(ctx.res, 200, {
    ...status,
    status: 'failed',
    error: { code: job.result.code, message: job.result.message },
  });
}

// GET …/content — https://learn.microsoft.com/graph/api/driveitem-get-content: 302 Found to a
// pre-authenticated URL, which the client then fetches without its Authorization header.
export function getContent(ctx: RouteContext, address: Address): undefined {
  const item = resolve(ctx, address);
  if (!item) return itemNotFound(ctx.res);
  if (ctx.state.isFolder(item)) return sendError(ctx.res, 400, 'invalidRequest', 'A folder has no content.');
  ctx.res.writeHead(302, { location: ctx.state.downloadUrl(item, ctx.origin), 'content-length': 0 });
  ctx.res.end();
}

// GET <downloadUrl> — the pre-authenticated URL, honouring Range
// (https://learn.microsoft.com/graph/api/driveitem-get-content#partial-range-downloads). It needs no
// token; ferry never sends its Graph token to another host, and this fake checks that.
export function download(ctx: RouteContext, token: string): undefined {
  if (ctx.req.headers.authorization !== undefined) {
    return sendError(
      ctx.res,
      401,
      'unauthenticated',
      'A pre-authenticated URL takes no Authorization header.',
    );
  }
  const entry = ctx.state.downloads.get(token);
  const item = entry && entry.expires > Date.now() ? ctx.state.items.get(entry.itemId) : undefined;
  if (!item || item.content === undefined) return itemNotFound(ctx.res);
  const content = item.content;
  const m = /^bytes=(\d+)-(\d*)$/.exec(ctx.req.headers.range ?? '');
  if (!m) {
    ctx.res.writeHead(200, {
      'content-type': item.mimeType ?? 'application/octet-stream',
      'content-length': content.length,
    });
    ctx.res.end(content);
    return;
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? content.length - 1 : Math.min(Number(m[2]), content.length - 1);
  if (start >= content.length || start > end) {
    ctx.res.writeHead(416, { 'content-range': `bytes */${content.length}` });
    ctx.res.end();
    return;
  }
  ctx.res.writeHead(206, {
    'content-type': item.mimeType ?? 'application/octet-stream',
    'content-range': `bytes ${start}-${end}/${content.length}`,
    'content-length': end - start + 1,
  });
  ctx.res.end(content.subarray(start, end + 1));
}
