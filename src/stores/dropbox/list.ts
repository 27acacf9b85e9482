// Listing on Dropbox: files/list_folder and files/list_folder/continue, page by page
// (https://www.dropbox.com/developers/documentation/http/documentation#files-list_folder).
//
// Paths: Dropbox is case-insensitive and only promises the right case in the LAST component of
// path_display. So an entry's ferry path is built from the listed path (as the caller gave it) plus the
// `name` of each entry down the tree: folders seen in a recursive listing are remembered by path_lower
// (memory grows with the number of folders, not of entries). A recursive listing also returns the listed
// folder itself, which is skipped.

import type { Entry, ListOptions } from '../contract.js';
import { pages } from '../shared/paging.js';
import { joinPath } from '../shared/paths.js';
import type { DropboxClient, ListFolderResult, Metadata } from './client.js';

export async function* listDropbox(
  client: DropboxClient,
  path: string,
  dropboxPath: string,
  limit: number,
  options: ListOptions = {},
): AsyncGenerator<Entry> {
  const recursive = options.recursive ?? false;
  const signal = options.signal;
  const rootLower = dropboxPath.toLowerCase();
  /** path_lower of folders met so far -> their ferry path. */
  const folders = new Map<string, string>([[rootLower, path]]);

  const listed = pages(
    (cursor) =>
      cursor === undefined
        ? client.rpc<ListFolderResult>(
            'files/list_folder',
            {
              path: dropboxPath,
              recursive,
              limit,
              include_deleted: false,
              include_non_downloadable_files: true,
            },
            path,
            signal,
          )
        : client.rpc<ListFolderResult>('files/list_folder/continue', { cursor }, path, signal),
    (page) => (page.has_more ? page.cursor : undefined),
  );
  for await (const page of listed) {
    for (const meta of page.entries) {
      const entry = toEntry(meta, path, rootLower, recursive, folders);
      if (entry) yield entry;
    }
  }
}

function toEntry(
  meta: Metadata,
  listed: string,
  rootLower: string,
  recursive: boolean,
  folders: Map<string, string>,
): Entry | undefined {
  if (meta['.tag'] === 'deleted') return undefined;
  const lower = meta.path_lower ?? '';
  if (lower === rootLower) return undefined; // the listed folder itself (recursive listings)
  const path = recursive ? pathInTree(meta, listed, rootLower, folders) : joinPath(listed, meta.name);
  if (meta['.tag'] === 'folder') {
    if (recursive) folders.set(lower, path);
    return { name: meta.name, path, size: 0, isDir: true };
  }
  return { name: meta.name, path, size: meta.size, isDir: false, modTime: new Date(meta.server_modified) };
}

function pathInTree(meta: Metadata, listed: string, rootLower: string, folders: Map<string, string>): string {
  const lower = meta.path_lower ?? '';
  const parentLower = lower.slice(0, Math.max(lower.lastIndexOf('/'), 0));
  const parent = folders.get(parentLower);
  if (parent !== undefined) return joinPath(parent, meta.name);
  // Parent not seen yet (Dropbox does not promise parents first): fall back to path_display below the root.
  const display = meta.path_display ?? lower;
  const below = display.slice(rootLower.length + 1);
  const slash = below.lastIndexOf('/');
  return joinPath(listed, slash < 0 ? meta.name : `${below.slice(0, slash)}/${meta.name}`);
}
