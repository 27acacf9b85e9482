// Paths to Drive ids. Drive has no paths: every lookup walks from the root ('root' alias) one name at a
// time with files.list. Drive also allows several items of one name in a folder, so this module
// picks one (folders for folder segments, the most recently modified file for the last one), and
// serialises folder creation within the store so that concurrent writes into a missing folder make
// ONE folder, not one each (rclone's dircache does the same).
import { splitPath } from '../shared/paths.js';
import { type DriveApi, type DriveFile, isFolder } from './client.js';

export const ROOT_ID = 'root';

/** How long a folder id this store found or made for a write is reused without looking again. */
const FOLDER_TTL_MS = 60_000;

export interface ResolvedFile {
  parentId: string;
  file: DriveFile;
}

/** The most recently modified of several files of one name. */
export function newest(files: DriveFile[]): DriveFile | undefined {
  let best: DriveFile | undefined;
  for (const f of files) {
    if (!best || (f.modifiedTime ?? '') > (best.modifiedTime ?? '')) best = f;
  }
  return best;
}

export class DriveResolver {
  readonly #api: DriveApi;
  readonly #folders = new Map<string, { id: string; expires: number }>();
  readonly #pending = new Map<string, Promise<string>>();

  constructor(api: DriveApi) {
    this.#api = api;
  }

  /** Live lookup of the folder at `path` ("" is the root); undefined when it or a parent is missing. */
  async findFolder(path: string, signal: AbortSignal | undefined): Promise<string | undefined> {
    let id = ROOT_ID;
    let walked = '';
    for (const name of splitPath(path)) {
      walked = walked === '' ? name : `${walked}/${name}`;
      const folders = (await this.#api.named(id, name, signal, `files.list ${walked}`)).filter(isFolder);
      const folder = folders[0];
      if (!folder) return undefined;
      id = folder.id;
    }
    return id;
  }

  /** Live lookup of the file (not folder) at `path`; undefined when it or a parent is missing. */
  async findFile(path: string, signal: AbortSignal | undefined): Promise<ResolvedFile | undefined> {
    const segments = splitPath(path);
    const name = segments.pop();
    if (name === undefined) return undefined;
    const parentId = await this.findFolder(segments.join('/'), signal);
    if (parentId === undefined) return undefined;
    const file = newest(
      (await this.#api.named(parentId, name, signal, `files.list ${path}`)).filter((f) => !isFolder(f)),
    );
    return file ? { parentId, file } : undefined;
  }

  /** Every file (not folder) named `name` in a folder, and whether a folder of that name is there too. */
  async filesNamed(
    parentId: string,
    name: string,
    signal: AbortSignal | undefined,
    operation: string,
  ): Promise<{ files: DriveFile[]; folder: boolean }> {
    const all = await this.#api.named(parentId, name, signal, operation);
    return { files: all.filter((f) => !isFolder(f)), folder: all.some(isFolder) };
  }

  /** The folder at `path`, made (with its missing parents) when absent. */
  async ensureFolder(path: string, signal: AbortSignal | undefined): Promise<string> {
    let id = ROOT_ID;
    let walked = '';
    for (const name of splitPath(path)) {
      walked = walked === '' ? name : `${walked}/${name}`;
      id = await this.#ensureChild(id, walked, name, signal);
    }
    return id;
  }

  /** Drops what was remembered (after a failure that may mean a folder went away). */
  forget(): void {
    this.#folders.clear();
  }

  async #ensureChild(
    parentId: string,
    path: string,
    name: string,
    signal: AbortSignal | undefined,
  ): Promise<string> {
    const known = this.#folders.get(path);
    if (known && known.expires > Date.now()) return known.id;
    const pending = this.#pending.get(path);
    if (pending) return pending;
    const work = (async () => {
      const existing = await this.#api.named(parentId, name, signal, `files.list ${path}`);
      // A file of the same name does not stand in the way: Drive keeps files and folders apart.
      const folder = existing.find(isFolder);
      const id =
        folder?.id ?? (await this.#api.createFolder(parentId, name, signal, `files.create ${path}`)).id;
      this.#folders.set(path, { id, expires: Date.now() + FOLDER_TTL_MS });
      return id;
    })();
    this.#pending.set(path, work);
    try {
      return await work;
    } finally {
      this.#pending.delete(path);
    }
  }
}
