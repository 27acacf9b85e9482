// Listing on Box: the folder's items page by page (GET /folders/{id}/items, marker paging). A
// recursive listing walks the tree depth-first, yielding each folder before its contents; memory is
// the stack of folders still to visit, not the entries. Web links are not objects and are skipped.
import type { Entry, ListOptions } from '../contract.js';
import { joinPath } from '../shared/paths.js';
import type { BoxItem } from './client.js';
import type { BoxResolver } from './resolve.js';

export async function* listBox(
  resolver: BoxResolver,
  path: string,
  options: ListOptions = {},
): AsyncGenerator<Entry> {
  const { signal } = options;
  const root = await resolver.withFolder(path, false, signal, async (id) => id);
  const pending: Array<{ id: string; path: string }> = [{ id: root, path }];
  for (let folder = pending.pop(); folder; folder = pending.pop()) {
    const below: Array<{ id: string; path: string }> = [];
    for await (const item of resolver.items(folder.id, folder.path, signal)) {
      const entry = toEntry(item, folder.path);
      if (!entry) continue;
      yield entry;
      if (options.recursive && item.type === 'folder') below.push({ id: item.id, path: entry.path });
    }
    pending.push(...below.reverse());
  }
}

function toEntry(item: BoxItem, parent: string): Entry | undefined {
  const path = joinPath(parent, item.name);
  if (item.type === 'folder') return { name: item.name, path, size: 0, isDir: true };
  if (item.type !== 'file') return undefined;
  const entry: Entry = { name: item.name, path, size: item.size ?? 0, isDir: false };
  if (item.modified_at) entry.modTime = new Date(item.modified_at);
  return entry;
}
