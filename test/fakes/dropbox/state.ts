// The fake Dropbox's file tree: one namespace per account, keyed by path_lower as Dropbox is
// case-insensitive and case-preserving. Operations answer Dropbox's metadata objects or a RouteError
// carrying the endpoint's 409 error (error_summary + tagged union), as the HTTP reference describes
// (https://www.dropbox.com/developers/documentation/http/documentation, "Errors" of each route).
import { createHash, randomBytes } from 'node:crypto';

export interface DbxNode {
  tag: 'file' | 'folder';
  id: string;
  name: string;
  /** path_display: the case each component was created with. */
  display: string;
  content: Buffer;
  rev: string;
  serverModified: Date;
}

/** A 409 endpoint error: `where` is the argument's tag ("path", "from_lookup"...), `reason` its union. */
export class RouteError extends Error {
  constructor(
    readonly where: string,
    readonly reason: string[],
  ) {
    super(`${where}/${reason.join('/')}`);
  }

  get body(): unknown {
    // {"error_summary": "path/not_found/..", "error": {".tag": "path", "path": {".tag": "not_found"}}}
    let inner: Record<string, unknown> | undefined;
    for (const tag of [...this.reason].reverse())
      inner = inner ? { '.tag': tag, [tag]: inner } : { '.tag': tag };
    return { error_summary: `${this.message}/..`, error: { '.tag': this.where, [this.where]: inner } };
  }
}

/** Dropbox's content_hash (https://www.dropbox.com/developers/reference/content-hash). */
export function contentHash(data: Buffer): string {
  const block = 4 * 1024 * 1024;
  const overall = createHash('sha256');
  for (let at = 0; at < data.length; at += block) {
    overall.update(
      createHash('sha256')
        .update(data.subarray(at, at + block))
        .digest(),
    );
  }
  return overall.digest('hex');
}

function newRev(): string {
  return randomBytes(8).toString('hex');
}

function parentOf(lower: string): string {
  return lower.slice(0, Math.max(lower.lastIndexOf('/'), 0));
}

export class DropboxNamespace {
  readonly nodes = new Map<string, DbxNode>();

  /** Validates a path argument: "/a/b" (or "" where the root is allowed). Throws malformed_path. */
  check(where: string, path: unknown, rootAllowed = false): string {
    if (typeof path !== 'string') throw new RouteError(where, ['malformed_path']);
    if (path === '' && rootAllowed) return '';
    if (!path.startsWith('/') || path.endsWith('/') || path.includes('//')) {
      throw new RouteError(where, ['malformed_path']);
    }
    // Backslash and DEL are not allowed in Dropbox names (rclone's dropbox encoder escapes them).
    if (/[\\\u007f]/.test(path)) throw new RouteError(where, ['malformed_path']);
    return path;
  }

  get(where: string, path: string): DbxNode {
    const node = this.nodes.get(path.toLowerCase());
    if (!node) throw new RouteError(where, ['not_found']);
    return node;
  }

  /** Children (or all descendants) of a folder, sorted by path_lower, the folder itself first when recursive. */
  list(path: string, recursive: boolean): DbxNode[] {
    const lower = path.toLowerCase();
    const self = lower === '' ? undefined : this.nodes.get(lower);
    if (lower !== '' && !self) throw new RouteError('path', ['not_found']);
    if (self && self.tag !== 'folder') throw new RouteError('path', ['not_folder']);
    const out: DbxNode[] = [];
    for (const [key, node] of this.nodes) {
      if (recursive ? key.startsWith(`${lower}/`) : parentOf(key) === lower) out.push(node);
    }
    out.sort((a, b) => (a.display.toLowerCase() < b.display.toLowerCase() ? -1 : 1));
    return recursive && self ? [self, ...out] : out;
  }

  createFolder(path: string): DbxNode {
    const existing = this.nodes.get(path.toLowerCase());
    if (existing) throw new RouteError('path', ['conflict', existing.tag]);
    this.#ensureParents('path', path);
    return this.#put(path, 'folder', Buffer.alloc(0));
  }

  /** files/upload and upload_session/finish commits; mode "add" refuses to replace. */
  write(path: string, content: Buffer, mode: string): DbxNode {
    const existing = this.nodes.get(path.toLowerCase());
    if (existing?.tag === 'folder') throw new RouteError('path', ['conflict', 'folder']);
    if (existing && mode === 'add') throw new RouteError('path', ['conflict', 'file']);
    this.#ensureParents('path', path);
    return this.#put(path, 'file', content, existing);
  }

  delete(path: string, parentRev?: string): DbxNode {
    const node = this.get('path_lookup', path);
    if (parentRev !== undefined && (node.tag !== 'file' || node.rev !== parentRev)) {
      throw new RouteError('path_write', ['conflict', node.tag]);
    }
    const lower = path.toLowerCase();
    for (const key of [...this.nodes.keys()]) {
      if (key === lower || key.startsWith(`${lower}/`)) this.nodes.delete(key);
    }
    return node;
  }

  /** files/copy_v2 and files/move_v2: whole subtrees; the destination must be free. */
  relocate(from: string, to: string, move: boolean): DbxNode {
    const source = this.get('from_lookup', from);
    const existing = this.nodes.get(to.toLowerCase());
    if (existing) throw new RouteError('to', ['conflict', existing.tag]);
    const fromLower = from.toLowerCase();
    if (to.toLowerCase().startsWith(`${fromLower}/`)) throw new RouteError('to', ['cant_nest_shared_folder']);
    this.#ensureParents('to', to);
    const moved: Array<[string, DbxNode]> = [];
    for (const [key, node] of this.nodes) {
      if (key === fromLower || key.startsWith(`${fromLower}/`)) moved.push([key, node]);
    }
    let result: DbxNode | undefined;
    for (const [key, node] of moved) {
      const display = to + node.display.slice(from.length);
      if (move) this.nodes.delete(key);
      const copy = move
        ? { ...node, display }
        : { ...node, display, id: `id:${randomBytes(9).toString('base64url')}`, rev: newRev() };
      if (!move) copy.serverModified = new Date();
      this.nodes.set(display.toLowerCase(), copy);
      if (key === fromLower) result = copy;
    }
    return result ?? source;
  }

  #ensureParents(where: string, path: string): void {
    const parts = path.split('/').slice(1, -1);
    let display = '';
    for (const part of parts) {
      display = `${display}/${part}`;
      const node = this.nodes.get(display.toLowerCase());
      if (node?.tag === 'file') throw new RouteError(where, ['conflict', 'file']);
      if (!node) this.#put(display, 'folder', Buffer.alloc(0));
      else display = node.display;
    }
  }

  #put(path: string, tag: DbxNode['tag'], content: Buffer, existing?: DbxNode): DbxNode {
    const node: DbxNode = {
      tag,
      id: existing?.id ?? `id:${randomBytes(9).toString('base64url')}`,
      name: path.slice(path.lastIndexOf('/') + 1),
      display: path,
      content,
      rev: newRev(),
      serverModified: new Date(),
    };
    this.nodes.set(path.toLowerCase(), node);
    return node;
  }
}

/** Metadata as the routes answer it (https://www.dropbox.com/developers/documentation/http/documentation#files-get_metadata). */
export function metadataOf(node: DbxNode, tagged = true): Record<string, unknown> {
  const base: Record<string, unknown> = {
    name: node.name,
    path_lower: node.display.toLowerCase(),
    path_display: node.display,
    id: node.id,
  };
  if (node.tag === 'folder') return { '.tag': 'folder', ...base };
  const seconds = new Date(Math.floor(node.serverModified.getTime() / 1000) * 1000).toISOString();
  const file = {
    ...base,
    client_modified: seconds.replace('.000', ''),
    server_modified: seconds.replace('.000', ''),
    rev: node.rev,
    size: node.content.length,
    is_downloadable: true,
    content_hash: contentHash(node.content),
  };
  return tagged ? { '.tag': 'file', ...file } : file;
}
