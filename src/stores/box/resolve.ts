// Box addresses items by id; ferry by path. A path is resolved by walking from the root folder "0",
// listing each folder's items ("List items in folder", GET /folders/{id}/items, marker paging) until
// the next name is found. Names match exactly (ferry paths are exact bytes).
//
// Folder ids are cached per store (path -> id), so writing many files into one folder costs one
// upload each, not a walk each. A cached id can go stale when someone else deletes the folder: an
// operation that gets not_found through a cached id clears the cache and runs once more from a fresh
// walk (withFolder), which is re-resolution, not a retry of a provider failure.

import { notFound } from '../../errors.js';
import { pages } from '../shared/paging.js';
import { joinPath, splitPath } from '../shared/paths.js';
import { type BoxClient, type BoxItem, type BoxItems, ITEM_FIELDS } from './client.js';
import { conflictOf, isBoxNotFound } from './errors.js';

export const ROOT_ID = '0';

export class BoxResolver {
  readonly #client: BoxClient;
  readonly #pageSize: number;
  readonly #folders = new Map<string, string>([['', ROOT_ID]]);

  constructor(client: BoxClient, pageSize: number) {
    this.#client = client;
    this.#pageSize = pageSize;
  }

  /** The items of a folder, page by page. not_found when the folder is gone. */
  async *items(folderId: string, what: string, signal?: AbortSignal): AsyncGenerator<BoxItem> {
    const listed = pages(
      (marker) =>
        this.#client.api<BoxItems>({
          method: 'GET',
          path: `/folders/${encodeURIComponent(folderId)}/items`,
          query: { fields: ITEM_FIELDS, limit: this.#pageSize, usemarker: true, marker },
          signal,
          operation: `list folder ${what}`,
        }),
      (page) => page.next_marker ?? undefined,
    );
    for await (const page of listed) yield* page.entries;
  }

  /** The item named `name` in a folder, or undefined. */
  async child(
    folderId: string,
    name: string,
    what: string,
    signal?: AbortSignal,
  ): Promise<BoxItem | undefined> {
    for await (const item of this.items(folderId, what, signal)) if (item.name === name) return item;
    return undefined;
  }

  /** The id of the folder at `path`; with `create`, missing folders are made (POST /folders). */
  async folderId(path: string, create: boolean, signal?: AbortSignal): Promise<string> {
    const segments = splitPath(path);
    // Start from the deepest cached ancestor (the root always is).
    let depth = segments.length;
    let id = this.#folders.get(path);
    while (id === undefined) id = this.#folders.get(segments.slice(0, --depth).join('/'));
    let at = segments.slice(0, depth).join('/');
    for (const name of segments.slice(depth)) {
      const here = joinPath(at, name);
      const item = await this.child(id, name, here, signal);
      if (item?.type === 'folder') id = item.id;
      else if (item || !create) throw notFound(`box: no folder ${here}`);
      else id = await this.#createFolder(id, name, here, signal);
      at = here;
      this.#folders.set(at, id);
    }
    return id;
  }

  /** The file at `path` (folders are not objects: not_found). */
  async file(path: string, signal?: AbortSignal): Promise<BoxItem> {
    const segments = splitPath(path);
    const name = segments.pop();
    if (name === undefined) throw notFound('box: the root folder is not an object');
    return this.withFolder(segments.join('/'), false, signal, async (folderId) => {
      const item = await this.child(folderId, name, path, signal);
      if (item?.type !== 'file') throw notFound(`box: no file ${path}`);
      return item;
    });
  }

  /**
   * Runs `op` with the folder's id. When Box answers 404 (a folder id from the cache may be stale),
   * the cache is dropped and `op` runs once more after a fresh walk.
   */
  async withFolder<T>(
    path: string,
    create: boolean,
    signal: AbortSignal | undefined,
    op: (folderId: string) => Promise<T>,
  ): Promise<T> {
    const attempt = async () => op(await this.folderId(path, create, signal));
    try {
      return await attempt();
    } catch (err) {
      if (this.#folders.size <= 1 || !isBoxNotFound(err)) throw err;
      this.forget();
      return attempt();
    }
  }

  forget(): void {
    this.#folders.clear();
    this.#folders.set('', ROOT_ID);
  }

  async #createFolder(parentId: string, name: string, what: string, signal?: AbortSignal): Promise<string> {
    try {
      const folder = await this.#client.api<BoxItem>({
        method: 'POST',
        path: '/folders',
        query: { fields: 'type,id,name' },
        json: { name, parent: { id: parentId } },
        signal,
        operation: `create folder ${what}`,
      });
      return folder.id;
    } catch (err) {
      // Made meanwhile by a concurrent write: use it.
      const inTheWay = conflictOf(err);
      if (inTheWay?.type === 'folder') return inTheWay.id;
      throw err;
    }
  }
}
