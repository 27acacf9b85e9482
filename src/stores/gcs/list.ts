// Listing on Google Cloud Storage, page by page: the project's buckets for the empty path; objects
// with delimiter "/" for one folder level; all objects under the prefix for a recursive listing, with
// each folder between the listed folder and an object yielded once, before its first object
// (shared/folders.ts; docs/api.md, "Listing objects").
// https://cloud.google.com/storage/docs/json_api/v1/buckets/list
// https://cloud.google.com/storage/docs/json_api/v1/objects/list
import type { Storage } from '@google-cloud/storage';
import { invalid, notFound } from '../../errors.js';
import type { Entry } from '../contract.js';
import { FolderChain, folderEntry } from '../shared/folders.js';
import { pages } from '../shared/paging.js';
import { baseName } from '../shared/paths.js';
import { toFerryError } from './errors.js';
import { splitPath } from './paths.js';

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
  /** Base64, as the JSON API gives them. */
  md5Hash?: string;
  crc32c?: string;
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

const OBJECT_FIELDS = 'items(name,size,updated,contentType,md5Hash,crc32c),prefixes,nextPageToken';

export async function* listBuckets(ctx: ListContext): AsyncGenerator<Entry> {
  if (!ctx.projectId) {
    throw invalid(
      'gcs: listing buckets needs a project: set metadata project_id or use a key with project_id',
    );
  }
  const listed = pages(
    async (pageToken) => {
      ctx.signal?.throwIfAborted();
      try {
        const [, , response] = await ctx.storage.getBuckets({
          autoPaginate: false,
          maxResults: ctx.pageSize,
          ...(pageToken ? { pageToken } : {}),
        });
        return (response ?? {}) as { items?: BucketItem[]; nextPageToken?: string };
      } catch (err) {
        throw toFerryError(err, 'list buckets', ctx.signal);
      }
    },
    (page) => page.nextPageToken,
  );
  for await (const page of listed) {
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
  }
}

export async function* listFolder(ctx: ListContext, path: string, recursive: boolean): AsyncGenerator<Entry> {
  const { bucket, key } = splitPath(path);
  const prefix = key === '' ? '' : `${key}/`;
  let found = false;
  const chain = new FolderChain();
  for await (const page of objectPages(ctx, bucket, prefix, recursive)) {
    if ((page.items?.length ?? 0) > 0 || (page.prefixes?.length ?? 0) > 0) found = true;
    if (!recursive) {
      for (const sub of page.prefixes ?? []) {
        const rel = sub.slice(prefix.length, -1);
        // "a//b" makes an empty segment, which no path can address: skip it.
        if (rel !== '') yield folderEntry(`${bucket}/${prefix}${rel}`);
      }
      for (const item of page.items ?? []) {
        // A "folder/" marker object (an empty folder made by a tool) is the folder itself.
        if (item.name.length > prefix.length) yield fileEntry(bucket, item);
      }
      continue;
    }
    for (const item of page.items ?? []) {
      const { folders, file } = chain.next(item.name.slice(prefix.length));
      for (const folder of folders) yield folderEntry(`${bucket}/${prefix}${folder}`);
      if (file) yield fileEntry(bucket, item);
    }
  }
  // A missing bucket answers 404 by itself; a prefix exists only through what is under it.
  if (!found && prefix !== '') throw notFound(`gcs: folder ${path} not found`);
}

function objectPages(
  ctx: ListContext,
  bucket: string,
  prefix: string,
  recursive: boolean,
): AsyncGenerator<ObjectsPage> {
  const client = ctx.storage.bucket(bucket);
  return pages(
    async (pageToken) => {
      ctx.signal?.throwIfAborted();
      try {
        const [, , response] = await client.getFiles({
          autoPaginate: false,
          prefix,
          maxResults: ctx.pageSize,
          fields: OBJECT_FIELDS,
          ...(recursive ? {} : { delimiter: '/' }),
          ...(pageToken ? { pageToken } : {}),
        });
        return (response ?? {}) as ObjectsPage;
      } catch (err) {
        throw toFerryError(err, `list ${bucket}/${prefix}`, ctx.signal);
      }
    },
    (page) => page.nextPageToken,
  );
}

function fileEntry(bucket: string, item: ObjectItem): Entry {
  const path = `${bucket}/${item.name}`;
  return {
    name: baseName(path),
    path,
    size: Number(item.size ?? 0),
    isDir: false,
    ...(item.updated ? { modTime: new Date(item.updated) } : {}),
    ...(item.contentType ? { mimeType: item.contentType } : {}),
    ...(item.md5Hash || item.crc32c ? { hashes: listedHashes(item) } : {}),
  };
}

function listedHashes(item: ObjectItem): NonNullable<Entry['hashes']> {
  const hex = (b64: string) => Buffer.from(b64, 'base64').toString('hex');
  return {
    ...(item.md5Hash ? { md5: hex(item.md5Hash) } : {}),
    ...(item.crc32c ? { crc32c: hex(item.crc32c) } : {}),
  };
}
