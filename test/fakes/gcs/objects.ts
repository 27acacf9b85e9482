// The fake GCS's JSON API metadata routes: buckets (list, insert, get) and objects (list, get,
// delete, rewrite). Each handler names the reference page it follows.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody, sendError, sendJson } from './http.js';
import { bucketResource, compareNames, type GcsState, objectResource, type StoredObject } from './state.js';

export interface RouteContext {
  state: GcsState;
  req: IncomingMessage;
  res: ServerResponse;
  query: URLSearchParams;
  /** Largest page any list answers, whatever maxResults asks. */
  pageSize: number;
  /** Bytes one rewrite call copies before answering done: false with a rewriteToken. */
  rewriteChunk: number;
  /** An upload's media as received: with a byte flipped when a test armed a corruption (FakeServer.tamper). */
  tamper: (media: Buffer) => Buffer;
}

function pageLimit(ctx: RouteContext): number {
  const asked = Number(ctx.query.get('maxResults') ?? '1000');
  return Math.max(1, Math.min(Number.isFinite(asked) && asked > 0 ? asked : 1000, ctx.pageSize));
}

const token = (name: string) => Buffer.from(name).toString('base64url');
const untoken = (value: string | null) =>
  value ? Buffer.from(value, 'base64url').toString('utf8') : undefined;

export function noSuchBucket(res: ServerResponse): void {
  sendError(res, 404, 'notFound', 'The specified bucket does not exist.');
}

export function noSuchObject(res: ServerResponse, bucket: string, name: string): void {
  sendError(res, 404, 'notFound', `No such object: ${bucket}/${name}`);
}

/** GET /storage/v1/b?project= — https://cloud.google.com/storage/docs/json_api/v1/buckets/list */
export function listBuckets(ctx: RouteContext): void {
  const project = ctx.query.get('project');
  if (!project) {
    sendError(ctx.res, 400, 'required', 'Required parameter: project');
    return;
  }
  const after = untoken(ctx.query.get('pageToken'));
  const prefix = ctx.query.get('prefix') ?? '';
  const all = [...ctx.state.buckets.values()]
    .filter((b) => b.project === project && b.name.startsWith(prefix))
    .sort((a, b) => compareNames(a.name, b.name))
    .filter((b) => after === undefined || compareNames(b.name, after) > 0);
  const limit = pageLimit(ctx);
  const page = all.slice(0, limit);
  sendJson(ctx.res, 200, {
    kind: 'storage#buckets',
    ...(page.length > 0 ? { items: page.map(bucketResource) } : {}),
    ...(all.length > limit ? { nextPageToken: token((page.at(-1) as { name: string }).name) } : {}),
  });
}

/** POST /storage/v1/b?project= — https://cloud.google.com/storage/docs/json_api/v1/buckets/insert */
export async function insertBucket(ctx: RouteContext): Promise<void> {
  const project = ctx.query.get('project');
  const body = JSON.parse((await readBody(ctx.req)).toString('utf8') || '{}') as { name?: string };
  if (!project) {
    sendError(ctx.res, 400, 'required', 'Required parameter: project');
    return;
  }
  if (!body.name) {
    sendError(ctx.res, 400, 'required', 'Required');
    return;
  }
  if (ctx.state.buckets.has(body.name)) {
    return sendError(
      ctx.res,
      409,
      'conflict',
      'Your previous request to create the named bucket succeeded and you already own it.',
    );
  }
  sendJson(ctx.res, 200, bucketResource(ctx.state.createBucket(body.name, project)));
}

/** GET /storage/v1/b/{bucket} — https://cloud.google.com/storage/docs/json_api/v1/buckets/get */
export function getBucket(ctx: RouteContext, bucket: string): void {
  const found = ctx.state.buckets.get(bucket);
  if (!found) {
    noSuchBucket(ctx.res);
    return;
  }
  sendJson(ctx.res, 200, bucketResource(found));
}

/**
 * GET /storage/v1/b/{bucket}/o — https://cloud.google.com/storage/docs/json_api/v1/objects/list
 * With a delimiter, names whose rest (after the prefix) holds it are rolled up into `prefixes`, each
 * once; items and prefixes together count against maxResults. The page token is opaque (here: the
 * last name the page covered).
 */
export function listObjects(ctx: RouteContext, bucket: string): void {
  const objects = ctx.state.objectsOf(bucket);
  if (!objects) {
    noSuchBucket(ctx.res);
    return;
  }
  const prefix = ctx.query.get('prefix') ?? '';
  const delimiter = ctx.query.get('delimiter') ?? '';
  const trailing = ctx.query.get('includeTrailingDelimiter') === 'true';
  const after = untoken(ctx.query.get('pageToken'));
  const limit = pageLimit(ctx);
  const names = [...objects.keys()]
    .filter((n) => n.startsWith(prefix) && (after === undefined || compareNames(n, after) > 0))
    .sort(compareNames);
  const items: StoredObject[] = [];
  const prefixes: string[] = [];
  let last: string | undefined;
  let i = 0;
  while (i < names.length && items.length + prefixes.length < limit) {
    const name = names[i] as string;
    const cut = delimiter === '' ? -1 : name.indexOf(delimiter, prefix.length);
    if (cut < 0) {
      items.push(objects.get(name) as StoredObject);
      last = name;
      i++;
      continue;
    }
    const rolled = name.slice(0, cut + delimiter.length);
    prefixes.push(rolled);
    // includeTrailingDelimiter: an object named exactly like the prefix is listed as an item too.
    if (trailing && objects.has(rolled)) items.push(objects.get(rolled) as StoredObject);
    while (i < names.length && (names[i] as string).startsWith(rolled)) last = names[i++];
  }
  sendJson(ctx.res, 200, {
    kind: 'storage#objects',
    ...(prefixes.length > 0 ? { prefixes } : {}),
    ...(items.length > 0 ? { items: items.map(objectResource) } : {}),
    ...(i < names.length && last !== undefined ? { nextPageToken: token(last) } : {}),
  });
}

/** GET /storage/v1/b/{bucket}/o/{object} — https://cloud.google.com/storage/docs/json_api/v1/objects/get */
export function getObject(ctx: RouteContext, bucket: string, name: string): void {
  const objects = ctx.state.objectsOf(bucket);
  if (!objects) {
    noSuchBucket(ctx.res);
    return;
  }
  const found = objects.get(name);
  if (!found) {
    noSuchObject(ctx.res, bucket, name);
    return;
  }
  sendJson(ctx.res, 200, objectResource(found));
}

/** DELETE /storage/v1/b/{bucket}/o/{object} — https://cloud.google.com/storage/docs/json_api/v1/objects/delete */
export function deleteObject(ctx: RouteContext, bucket: string, name: string): void {
  const objects = ctx.state.objectsOf(bucket);
  if (!objects) {
    noSuchBucket(ctx.res);
    return;
  }
  if (!objects.delete(name)) {
    noSuchObject(ctx.res, bucket, name);
    return;
  }
  ctx.res.writeHead(204);
  ctx.res.end();
}

/**
 * POST /storage/v1/b/{srcBucket}/o/{srcObject}/rewriteTo/b/{dstBucket}/o/{dstObject}
 * https://cloud.google.com/storage/docs/json_api/v1/objects/rewrite
 * Copies at most `rewriteChunk` (or maxBytesRewrittenPerCall) bytes per call; until the copy is
 * done the answer carries a rewriteToken that the next call must send.
 */
export async function rewriteObject(
  ctx: RouteContext,
  source: { bucket: string; name: string },
  target: { bucket: string; name: string },
): Promise<void> {
  await readBody(ctx.req);
  const tokenParam = ctx.query.get('rewriteToken');
  let rewrite = tokenParam ? ctx.state.rewrites.get(tokenParam) : undefined;
  if (tokenParam && !rewrite) {
    sendError(ctx.res, 400, 'invalid', 'Invalid rewrite token.');
    return;
  }
  if (!rewrite) {
    const srcObjects = ctx.state.objectsOf(source.bucket);
    if (!srcObjects) {
      noSuchBucket(ctx.res);
      return;
    }
    const found = srcObjects.get(source.name);
    if (!found) {
      noSuchObject(ctx.res, source.bucket, source.name);
      return;
    }
    if (!ctx.state.objectsOf(target.bucket)) {
      noSuchBucket(ctx.res);
      return;
    }
    rewrite = ctx.state.newRewrite(found, target.bucket, target.name);
  }
  const perCall = Number(ctx.query.get('maxBytesRewrittenPerCall') ?? '0') || ctx.rewriteChunk;
  const size = rewrite.source.data.length;
  rewrite.done = Math.min(size, rewrite.done + perCall);
  const common = {
    kind: 'storage#rewriteResponse',
    totalBytesRewritten: String(rewrite.done),
    objectSize: String(size),
  };
  if (rewrite.done < size) {
    return sendJson(ctx.res, 200, { ...common, done: false, rewriteToken: rewrite.token });
  }
  ctx.state.rewrites.delete(rewrite.token);
  if (!ctx.state.objectsOf(target.bucket)) {
    noSuchBucket(ctx.res);
    return;
  }
  const copy = ctx.state.put(target.bucket, target.name, rewrite.source.data, rewrite.source.contentType);
  sendJson(ctx.res, 200, { ...common, done: true, resource: objectResource(copy) });
}
