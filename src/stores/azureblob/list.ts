// Listing on Azure Blob Storage, page by page: containers for the empty path; blobs by hierarchy ("/")
// for one folder level; a flat listing for a recursive one, with each folder between the listed folder
// and a blob yielded once, before its first object (shared/folders.ts; docs/api.md, "Listing objects").
// https://learn.microsoft.com/en-us/rest/api/storageservices/list-containers2
// https://learn.microsoft.com/en-us/rest/api/storageservices/list-blobs
import type { BlobServiceClient, ContainerClient } from '@azure/storage-blob';
import { notFound } from '../../errors.js';
import type { Entry } from '../contract.js';
import { FolderChain, folderEntry } from '../shared/folders.js';
import { baseName } from '../shared/paths.js';
import { abortable } from './client.js';
import { toFerryError } from './errors.js';
import { splitPath } from './paths.js';

export interface ListContext {
  service: BlobServiceClient;
  pageSize: number;
  signal?: AbortSignal | undefined;
}

export async function* listContainers(ctx: ListContext): AsyncGenerator<Entry> {
  const pages = ctx.service.listContainers(abortable(ctx.signal)).byPage({ maxPageSize: ctx.pageSize });
  for await (const page of read(pages, 'list containers', ctx.signal)) {
    for (const container of page.containerItems) {
      yield {
        name: container.name,
        path: container.name,
        size: -1,
        isDir: true,
        modTime: container.properties.lastModified,
      };
    }
  }
}

/** The SDK's pages, what it throws read by errors.ts with the listing named. */
async function* read<Page>(
  pages: AsyncIterable<Page>,
  what: string,
  signal: AbortSignal | undefined,
): AsyncGenerator<Page> {
  try {
    for await (const page of pages) yield page;
  } catch (err) {
    throw toFerryError(err, what, signal);
  }
}

/** What a folder listing reads: the container's blobs whose names start with the prefix. */
interface Folder {
  client: ContainerClient;
  container: string;
  /** "" for the container's root, else the folder's key and "/". */
  prefix: string;
}

export async function* listFolder(ctx: ListContext, path: string, recursive: boolean): AsyncGenerator<Entry> {
  const { container, key } = splitPath(path);
  const prefix = key === '' ? '' : `${key}/`;
  const client = ctx.service.getContainerClient(container);
  const folder = { client, container, prefix };
  const found = recursive ? yield* listFlat(ctx, folder) : yield* listLevel(ctx, folder);
  // A container answers ContainerNotFound by itself; a prefix exists only through what is under it.
  if (!found && prefix !== '') throw notFound(`azureblob: folder ${path} not found`);
}

/** One level: BlobPrefix elements are the sub-folders. Returns whether anything was under the prefix. */
async function* listLevel(
  ctx: ListContext,
  { client, container, prefix }: Folder,
): AsyncGenerator<Entry, boolean> {
  let found = false;
  const pages = client
    .listBlobsByHierarchy('/', { prefix, ...abortable(ctx.signal) })
    .byPage({ maxPageSize: ctx.pageSize });
  for await (const page of read(pages, `list ${container}/${prefix}`, ctx.signal)) {
    const { blobPrefixes = [], blobItems } = page.segment;
    if (blobPrefixes.length > 0 || blobItems.length > 0) found = true;
    for (const sub of blobPrefixes) {
      const rel = sub.name.slice(prefix.length, -1);
      // "a//b" makes an empty segment, which no path can address: skip it.
      if (rel === '') continue;
      yield folderEntry(`${container}/${prefix}${rel}`);
    }
    for (const blob of blobItems) {
      // A "folder/" marker blob (an empty folder made by a tool) is the folder itself, not a file.
      if (blob.name.length === prefix.length) continue;
      yield fileEntry(container, blob.name, blob.properties);
    }
  }
  return found;
}

/** Everything under the prefix, folders derived from the blob names. */
async function* listFlat(
  ctx: ListContext,
  { client, container, prefix }: Folder,
): AsyncGenerator<Entry, boolean> {
  let found = false;
  const chain = new FolderChain();
  const pages = client
    .listBlobsFlat({ prefix, ...abortable(ctx.signal) })
    .byPage({ maxPageSize: ctx.pageSize });
  for await (const page of read(pages, `list ${container}/${prefix}`, ctx.signal)) {
    for (const blob of page.segment.blobItems) {
      found = true;
      const { folders, file } = chain.next(blob.name.slice(prefix.length));
      for (const folder of folders) yield folderEntry(`${container}/${prefix}${folder}`);
      if (file) yield fileEntry(container, blob.name, blob.properties);
    }
  }
  return found;
}

function fileEntry(
  container: string,
  name: string,
  properties: { contentLength?: number; lastModified: Date; contentType?: string; contentMD5?: Uint8Array },
): Entry {
  const path = `${container}/${name}`;
  return {
    name: baseName(path),
    path,
    size: properties.contentLength ?? 0,
    isDir: false,
    modTime: properties.lastModified,
    ...(properties.contentType ? { mimeType: properties.contentType } : {}),
    ...(properties.contentMD5 && properties.contentMD5.length === 16
      ? { hashes: { md5: Buffer.from(properties.contentMD5).toString('hex') } }
      : {}),
  };
}
