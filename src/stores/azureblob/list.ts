// Listing on Azure Blob Storage, page by page: containers for the empty path; blobs by hierarchy ("/")
// for one folder level; a flat listing for a recursive one, with each folder between the listed folder
// and a blob yielded once, before its first object (SPEC 2.5, DECISIONS "Listing").
// https://learn.microsoft.com/en-us/rest/api/storageservices/list-containers2
// https://learn.microsoft.com/en-us/rest/api/storageservices/list-blobs
import type { BlobServiceClient, ContainerClient } from '@azure/storage-blob';
import { notFound } from '../../errors.js';
import type { Entry } from '../contract.js';
import { abortable } from './client.js';
import { toFerryError } from './errors.js';
import { lastSegment, splitPath } from './paths.js';

export interface ListContext {
  service: BlobServiceClient;
  pageSize: number;
  signal?: AbortSignal | undefined;
}

export async function* listContainers(ctx: ListContext): AsyncGenerator<Entry> {
  const pages = ctx.service.listContainers(abortable(ctx.signal)).byPage({ maxPageSize: ctx.pageSize });
  try {
    for await (const page of pages) {
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
  } catch (err) {
    throw toFerryError(err, 'list containers', ctx.signal);
  }
}

export async function* listFolder(ctx: ListContext, path: string, recursive: boolean): AsyncGenerator<Entry> {
  const { container, key } = splitPath(path);
  const prefix = key === '' ? '' : `${key}/`;
  const client = ctx.service.getContainerClient(container);
  const found = recursive
    ? yield* listFlat(ctx, client, container, prefix)
    : yield* listLevel(ctx, client, container, prefix);
  // A container answers ContainerNotFound by itself; a prefix exists only through what is under it.
  if (!found && prefix !== '') throw notFound(`azureblob: folder ${path} not found`);
}

/** One level: BlobPrefix elements are the sub-folders. Returns whether anything was under the prefix. */
async function* listLevel(
  ctx: ListContext,
  client: ContainerClient,
  container: string,
  prefix: string,
): AsyncGenerator<Entry, boolean> {
  let found = false;
  const pages = client
    .listBlobsByHierarchy('/', { prefix, ...abortable(ctx.signal) })
    .byPage({ maxPageSize: ctx.pageSize });
  try {
    for await (const page of pages) {
      const { blobPrefixes = [], blobItems } = page.segment;
      if (blobPrefixes.length > 0 || blobItems.length > 0) found = true;
      for (const sub of blobPrefixes) {
        const rel = sub.name.slice(prefix.length, -1);
        // "a//b" makes an empty segment, which no path can address: skip it.
        if (rel === '') continue;
        yield folderEntry(container, `${prefix}${rel}`);
      }
      for (const blob of blobItems) {
        // A "folder/" marker blob (an empty folder made by a tool) is the folder itself, not a file.
        if (blob.name.length === prefix.length) continue;
        yield fileEntry(container, blob.name, blob.properties);
      }
    }
  } catch (err) {
    throw toFerryError(err, `list ${container}/${prefix}`, ctx.signal);
  }
  return found;
}

/**
 * Everything under the prefix. The flat listing is in lexicographic name order, so all blobs under
 * one folder are contiguous: comparing each blob's folder chain with the previous one yields every
 * folder once while remembering only one chain (memory does not grow with the listing).
 */
async function* listFlat(
  ctx: ListContext,
  client: ContainerClient,
  container: string,
  prefix: string,
): AsyncGenerator<Entry, boolean> {
  let found = false;
  let chain: string[] = [];
  const pages = client
    .listBlobsFlat({ prefix, ...abortable(ctx.signal) })
    .byPage({ maxPageSize: ctx.pageSize });
  try {
    for await (const page of pages) {
      for (const blob of page.segment.blobItems) {
        found = true;
        const segments = blob.name.slice(prefix.length).split('/');
        const leaf = segments.pop() ?? '';
        // Folders of this blob as paths relative to the prefix: "a", "a/b", ...
        const folders: string[] = [];
        for (const segment of segments) {
          if (segment === '') break; // an empty segment cannot be addressed; stop the chain there
          folders.push(folders.length === 0 ? segment : `${folders[folders.length - 1]}/${segment}`);
        }
        let same = 0;
        while (same < folders.length && same < chain.length && folders[same] === chain[same]) same++;
        for (const folder of folders.slice(same)) yield folderEntry(container, `${prefix}${folder}`);
        chain = folders;
        if (leaf !== '' && folders.length === segments.length) {
          yield fileEntry(container, blob.name, blob.properties);
        }
      }
    }
  } catch (err) {
    throw toFerryError(err, `list ${container}/${prefix}`, ctx.signal);
  }
  return found;
}

function folderEntry(container: string, key: string): Entry {
  const path = `${container}/${key}`;
  return { name: lastSegment(path), path, size: 0, isDir: true };
}

function fileEntry(
  container: string,
  name: string,
  properties: { contentLength?: number; lastModified: Date; contentType?: string },
): Entry {
  const path = `${container}/${name}`;
  return {
    name: lastSegment(path),
    path,
    size: properties.contentLength ?? 0,
    isDir: false,
    modTime: properties.lastModified,
    ...(properties.contentType ? { mimeType: properties.contentType } : {}),
  };
}
