// Metadata and download routes of the fake Drive (files.list, get, create, update, copy, delete).
import { fill, fixtureBody } from '../fixtures.js';
import { parseRange } from '../server.js';
import {
  FILE_DEFAULT_FIELDS,
  jsonBody,
  notFound,
  type RouteContext,
  sendError,
  sendResource,
} from './http.js';
import { compileQuery, QueryError } from './query.js';
import { type DriveFile, FOLDER_MIME, isGoogleNative, toResource } from './state.js';

function stringArray(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : undefined;
}

/** Checks that every id names a folder; answers 404 for the first that does not. */
function checkParents(ctx: RouteContext, ids: string[]): boolean {
  for (const id of ids) {
    const parent = ctx.state.get(id);
    if (!parent || parent.trashed || parent.mimeType !== FOLDER_MIME) {
      notFound(ctx.res, id);
      return false;
    }
  }
  return true;
}

// GET /drive/v3/files — https://developers.google.com/drive/api/reference/rest/v3/files/list
// pageSize 1..1000 (default 100); the fake may answer fewer (as the real API may) to exercise paging.
export function listFiles(ctx: RouteContext): undefined {
  const params = ctx.url.searchParams;
  const q = params.get('q') ?? 'trashed = false';
  let predicate: ReturnType<typeof compileQuery>;
  try {
    predicate = compileQuery(q, (id) => ctx.state.resolveId(id));
  } catch (err) {
    if (err instanceof QueryError) {
      sendError(ctx.res, 400, 'invalid', `Invalid Value (q: ${err.message})`);
      return;
    }
    throw err;
  }
  const pageSize = Number(params.get('pageSize') ?? '100');
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000) {
    sendError(ctx.res, 400, 'invalid', 'Invalid value for pageSize');
    return;
  }
  let offset = 0;
  const token = params.get('pageToken');
  if (token) {
    try {
      const decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as {
        q: string;
        offset: number;
      };
      if (decoded.q !== q || !Number.isInteger(decoded.offset)) throw new Error('mismatch');
      offset = decoded.offset;
    } catch {
      sendError(ctx.res, 400, 'invalid', 'Invalid Value (pageToken)');
      return;
    }
  }
  const matches = [...ctx.state.files.values()]
    .filter((f) => f.id !== ctx.state.rootId && predicate(f))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : 1));
  const size = Math.min(pageSize, ctx.maxPageSize);
  const page = matches.slice(offset, offset + size);
  const body = fill(fixtureBody('drive', 'files_list'), {
    incompleteSearch: false,
    files: page.map(toResource),
    nextPageToken:
      offset + size < matches.length
        ? Buffer.from(JSON.stringify({ q, offset: offset + size })).toString('base64url')
        : undefined,
  });
  sendResource(ctx, 200, body, `kind,nextPageToken,incompleteSearch,files(${FILE_DEFAULT_FIELDS})`);
}

// GET /drive/v3/files/{fileId} — https://developers.google.com/drive/api/reference/rest/v3/files/get
// alt=media downloads the content, honouring Range (https://developers.google.com/drive/api/guides/manage-downloads).
export function getFile(ctx: RouteContext, id: string): undefined {
  const file = ctx.state.get(id);
  if (!file) return notFound(ctx.res, id);
  if (ctx.url.searchParams.get('alt') !== 'media') {
    return sendResource(ctx, 200, toResource(file), FILE_DEFAULT_FIELDS);
  }
  if (isGoogleNative(file) || file.content === undefined) {
    return sendError(
      ctx.res,
      403,
      'fileNotDownloadable',
      'Only files with binary content can be downloaded. Use Export with Docs Editors files.',
    );
  }
  const content = file.content;
  const rangeHeader = ctx.req.headers.range;
  const range = rangeHeader ? parseRange(rangeHeader, content.length) : undefined;
  if (range === 'unsatisfiable') {
    ctx.res.writeHead(416, { 'content-range': `bytes */${content.length}` });
    ctx.res.end();
    return;
  }
  const headers: Record<string, string | number> = {
    'content-type': file.mimeType,
    'accept-ranges': 'bytes',
  };
  if (range) {
    headers['content-range'] = `bytes ${range.start}-${range.end}/${content.length}`;
    headers['content-length'] = range.end - range.start + 1;
    ctx.res.writeHead(206, headers);
    ctx.res.end(content.subarray(range.start, range.end + 1));
  } else {
    headers['content-length'] = content.length;
    ctx.res.writeHead(200, headers);
    ctx.res.end(content);
  }
}

// POST /drive/v3/files (metadata only, e.g. a folder) — https://developers.google.com/drive/api/reference/rest/v3/files/create
export function createFile(ctx: RouteContext): undefined {
  const body = jsonBody(ctx);
  if (!body) return;
  const name = typeof body.name === 'string' ? body.name : 'Untitled';
  const mimeType = typeof body.mimeType === 'string' ? body.mimeType : 'application/octet-stream';
  const parents = stringArray(body.parents) ?? ['root'];
  if (!checkParents(ctx, parents)) return;
  const file = ctx.state.create({
    name,
    mimeType,
    parents,
    ...(mimeType.startsWith('application/vnd.google-apps.') ? {} : { content: Buffer.alloc(0) }),
  });
  sendResource(ctx, 200, toResource(file), FILE_DEFAULT_FIELDS);
}

/** Applies addParents/removeParents (files.update); false when it has answered an error. */
export function moveParents(ctx: RouteContext, file: DriveFile): boolean {
  const add = (ctx.url.searchParams.get('addParents') ?? '').split(',').filter((s) => s !== '');
  const remove = (ctx.url.searchParams.get('removeParents') ?? '').split(',').filter((s) => s !== '');
  if (!checkParents(ctx, add)) return false;
  const resolvedRemove = remove.map((id) => ctx.state.resolveId(id));
  file.parents = file.parents.filter((p) => !resolvedRemove.includes(p));
  for (const id of add.map((a) => ctx.state.resolveId(a)))
    if (!file.parents.includes(id)) file.parents.push(id);
  return true;
}

// PATCH /drive/v3/files/{fileId} — https://developers.google.com/drive/api/reference/rest/v3/files/update
// `parents` is not writable here; moves use addParents/removeParents.
export function updateFile(ctx: RouteContext, id: string): undefined {
  const file = ctx.state.get(id);
  if (!file) return notFound(ctx.res, id);
  const body = jsonBody(ctx);
  if (!body) return;
  if (body.parents !== undefined) {
    return sendError(
      ctx.res,
      403,
      'fieldNotWritable',
      'The parents field is not directly writable in update requests. Use the addParents and removeParents parameters instead.',
    );
  }
  if (!moveParents(ctx, file)) return;
  if (typeof body.name === 'string') file.name = body.name;
  file.modifiedTime = new Date();
  sendResource(ctx, 200, toResource(file), FILE_DEFAULT_FIELDS);
}

// POST /drive/v3/files/{fileId}/copy — https://developers.google.com/drive/api/reference/rest/v3/files/copy
export function copyFile(ctx: RouteContext, id: string): undefined {
  const source = ctx.state.get(id);
  if (!source) return notFound(ctx.res, id);
  if (source.mimeType === FOLDER_MIME) {
    return sendError(ctx.res, 403, 'cannotCopyFile', 'This file cannot be copied by the user.');
  }
  const body = jsonBody(ctx);
  if (!body) return;
  const parents = stringArray(body.parents) ?? source.parents;
  if (!checkParents(ctx, parents)) return;
  const copy = ctx.state.create({
    name: typeof body.name === 'string' ? body.name : `Copy of ${source.name}`,
    mimeType: source.mimeType,
    parents,
    ...(source.content === undefined ? {} : { content: Buffer.from(source.content) }),
  });
  sendResource(ctx, 200, toResource(copy), FILE_DEFAULT_FIELDS);
}

// DELETE /drive/v3/files/{fileId} — https://developers.google.com/drive/api/reference/rest/v3/files/delete
// Deletes for good (skips the trash); a folder takes its descendants with it.
export function deleteFile(ctx: RouteContext, id: string): undefined {
  const file = ctx.state.get(id);
  if (!file || file.id === ctx.state.rootId) return notFound(ctx.res, id);
  ctx.state.delete(file.id);
  ctx.res.writeHead(204);
  ctx.res.end();
}
