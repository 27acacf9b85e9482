// Folders from a flat listing on the bucket stores (s3 family, gcs, azureblob), which have no folders,
// only keys: every prefix between the listed folder and an object is a folder, listed once, before its
// first object. Keys arrive in lexicographic order, so all keys under one prefix are contiguous:
// comparing each key's folder chain with the previous key's yields every folder once while
// remembering one chain (memory grows with depth, not with the listing).
import type { Entry } from '../contract.js';
import { baseName } from './paths.js';

export class FolderChain {
  /** Folder paths (relative to the listed folder) of the previous key, outermost first. */
  #chain: string[] = [];

  /**
   * For a key relative to the listed folder: the folders it opens that no earlier key did (relative
   * paths, outermost first), and whether the key itself is a file. A "folder/" marker object (what
   * consoles create for an empty folder) is not a file. A key with an empty segment ("a//b") cannot be
   * addressed: its chain stops before the empty segment, and it is not a file.
   */
  next(rel: string): { folders: string[]; file: boolean } {
    const segments = rel.split('/');
    const leaf = segments.pop() ?? '';
    const folders: string[] = [];
    for (const segment of segments) {
      if (segment === '') break;
      folders.push(folders.length === 0 ? segment : `${folders[folders.length - 1]}/${segment}`);
    }
    let same = 0;
    while (same < folders.length && same < this.#chain.length && folders[same] === this.#chain[same]) same++;
    this.#chain = folders;
    return { folders: folders.slice(same), file: leaf !== '' && folders.length === segments.length };
  }
}

/** A folder entry for a whole path ("bucket/a/b"). */
export function folderEntry(path: string): Entry {
  return { name: baseName(path), path, size: 0, isDir: true };
}
