// Listing on Google Cloud Storage, page by page: the project's buckets for the empty path; objects
// with delimiter "/" for one folder level; all objects under the prefix for a recursive listing, with
// each folder between the listed folder and an object yielded once, before its first object
// (SPEC 2.5, DECISIONS "Listing").
// https://cloud.google.com/storage/docs/json_api/v1/buckets/list
// https://cloud.google.com/storage/docs/json_api/v1/objects/list
import type { Storage } from '@google-cloud/storage';
import { invalid, notFound } from '../../errors.js';
import type { Entry } from '../contract.js';
import { toFerryError } from './errors.js';
import { lastSegment, splitPath } from './paths.js';

export interface ListContext {
  storage: Storage;
  pageSize: number;
  projectId: string | undefined;
  signal?: AbortSignal | undefined;
}

interface ObjectItem {
  name: string;
  size?: string;
  updated?: string;
  contentType?: string;
}

interface ObjectsPage {
  items?: ObjectItem[];
  prefixes?: string[];
  nextPageToken?: string;
}

interface BucketItem {
  name: string;
  updated?: string;
  timeCreated?: string;
}

const OBJECT_FIELDS = 'items(name,size,updated,contentType),prefixes,nextPageToken';

export async function* listBuckets(ctx: ListContext): AsyncGenerator<Entry> {
  if (!ctx.projectId) {
    throw invalid(
      'gcs: listing buckets needs a project: set metadata project_id or use a key with project_id',
    );
  }
  let pageToken: string | undefined;
  do {
    ctx.signal?.throwIfAborted();
    let page: { items?: BucketItem[]; nextPageToken?: string };
    try {
      const [, , response] = await ctx.storage.getBuckets({
        autoPaginate: false,
        maxResults: ctx.pageSize,
        ...(pageToken ? { pageToken } : {}),
      });
      page = (response ?? {}) as typeof page;
    } catch (err) {
      throw toFerryError(err, 'list buckets', ctx.signal);
    }
    for (const bucket of page.items ?? []) {
      const modified = bucket.updated ?? bucket.timeCreated;
      yield {
        name: bucket.name,
        path: bucket.name,
        size: -1,
        isDir: true,
        ...(modified ? { modTime: new Date(modified) } : {}),
      };
    }
    pageToken = page.nextPageToken;
  } while (pageToken);
}

export async function* listFolder(ctx: ListContext, path: string, recursive: boolean): AsyncGenerator<Entry> {
  const { bucket, key } = splitPath(path);
  const prefix = key === '' ? '' : `${key}/`;
  let found = false;
  let chain: string[] = [];
  for await (const page of pages(ctx, bucket, prefix, recursive)) {
    if ((page.items?.length ?? 0) > 0 || (page.prefixes?.length ?? 0) > 0) found = true;
    if (!recursive) {
      for (const sub of page.prefixes ?? []) {
        const rel = sub.slice(prefix.length, -1);
        // "a//b" makes an empty segment, which no path can address: skip it.
        if (rel !== '') yield folderEntry(bucket, `${prefix}${rel}`);
      }
      for (const item of page.items ?? []) {
        // A "folder/" marker object (an empty folder made by a tool) is the folder itself.
        if (item.name.length > prefix.length) yield fileEntry(bucket, item);
      }
      continue;
    }
    // Objects come in name order, so all objects under one folder are contiguous: comparing each
    // object's folder chain with the previous one yields every folder once, remembering one chain.
    for (const item of page.items ?? []) {
      const segments = item.name.slice(prefix.length).split('/');
      const leaf = segments.pop() ?? '';
      const folders: string[] = [];
      for (const segment of segments) {
        if (segment === '') break; // an empty segment cannot be addressed; stop the chain there
        folders.push(folders.length === 0 ? segment : `${folders[folders.length - 1]}/${segment}`);
      }
      let same = 0;
      while (same < folders.length && same < chain.length && folders[same] === chain[same]) same++;
      for (const folder of folders.slice(same)) yield folderEntry(bucket, `${prefix}${folder}`);
      chain = folders;
      if (leaf !== '' && folders.length === segments.length) yield fileEntry(bucket, item);
    }
  }
  // A missing bucket answers 404 by itself; a prefix exists only through what is under it.
  if (!found && prefix !== '') throw notFound(`gcs: folder ${path} not found`);
}

async function* pages(
  ctx: ListContext,
  bucket: string,
  prefix: string,
  recursive: boolean,
): AsyncGenerator<ObjectsPage> {
  const client = ctx.storage.bucket(bucket);
  let pageToken: string | undefined;
  do {
    ctx.signal?.throwIfAborted();
    let page: ObjectsPage;
    try {
      const [, , response] = await client.getFiles({
        autoPaginate: false,
        prefix,
        maxResults: ctx.pageSize,
        fields: OBJECT_FIELDS,
        ...(recursive ? {} : { delimiter: '/' }),
        ...(pageToken ? { pageToken } : {}),
      });
      page = (response ?? {}) as ObjectsPage;
    } catch (err) {
      throw toFerryError(err, `list ${bucket}/${prefix}`, ctx.signal);
    }
    yield page;
    pageToken = page.nextPageToken;
  } while (pageToken);
}

function folderEntry(bucket: string, key: string): Entry {
  const path = `${bucket}/${key}`;
  return { name: lastSegment(path), path, size: 0, isDir: true };
}

function fileEntry(bucket: string, item: ObjectItem): Entry {
  const path = `${bucket}/${item.name}`;
  return {
    name: lastSegment(path),
    path,
    size: Number(item.size ?? 0),
    isDir: false,
    ...(item.updated ? { modTime: new Date(item.updated) } : {}),
    ...(item.contentType ? { mimeType: item.contentType } : {}),
  };
}
