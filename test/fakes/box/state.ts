// The fake Box's items: folders and files by id, the root folder "0" ("All Files"), one tree per user.
// Names are unique within a folder regardless of letter case, as on Box (a second one answers 409
// item_name_in_use naming the item in the way). Item JSON follows the "File" and "Folder" resources
// (https://developer.box.com/reference/resources/file/, .../resources/folder/).
import { createHash, randomInt } from 'node:crypto';

export interface BoxNode {
  type: 'file' | 'folder';
  id: string;
  name: string;
  parentId: string | null;
  content: Buffer;
  sha1: string;
  createdAt: Date;
  modifiedAt: Date;
  etag: number;
}

/** An error answer: {type: "error", status, code, message, context_info?}. */
export class BoxApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly contextInfo?: unknown,
  ) {
    super(message);
  }
}

let nextId = 1000;

/** Box validates names: no "/" or "\", no leading/trailing spaces, not "." or "..", at most 255 bytes. */
export function checkName(name: unknown): string {
  if (typeof name !== 'string' || name === '') throw new BoxApiError(400, 'bad_request', 'name is required');
  if (/[/\\]/.test(name) || name !== name.trim() || name === '.' || name === '..') {
    throw new BoxApiError(400, 'item_name_invalid', 'Item name invalid');
  }
  if (Buffer.byteLength(name) > 255) throw new BoxApiError(400, 'item_name_too_long', 'Item name too long');
  return name;
}

function boxTime(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, '-00:00');
}

export class BoxTree {
  readonly items = new Map<string, BoxNode>();

  constructor() {
    const now = new Date();
    this.items.set('0', {
      type: 'folder',
      id: '0',
      name: 'All Files',
      parentId: null,
      content: Buffer.alloc(0),
      sha1: '',
      createdAt: now,
      modifiedAt: now,
      etag: 0,
    });
  }

  get(id: string, type?: BoxNode['type']): BoxNode {
    const node = this.items.get(id);
    if (!node || (type && node.type !== type)) throw new BoxApiError(404, 'not_found', 'Not Found');
    return node;
  }

  children(folderId: string): BoxNode[] {
    this.get(folderId, 'folder');
    const out: BoxNode[] = [];
    for (const node of this.items.values()) if (node.parentId === folderId) out.push(node);
    // Box's default order is by type, then name.
    return out.sort((a, b) =>
      a.type !== b.type ? (a.type === 'folder' ? -1 : 1) : a.name < b.name ? -1 : 1,
    );
  }

  /** Throws 409 item_name_in_use when `name` is taken in the folder (ignoring case and `except`). */
  assertFree(folderId: string, name: string, except?: string, conflictsAsList = false): void {
    const taken = this.children(folderId).find(
      (n) => n.name.toLowerCase() === name.toLowerCase() && n.id !== except,
    );
    if (taken) {
      const mini = miniOf(taken);
      throw new BoxApiError(409, 'item_name_in_use', 'Item with the same name already exists', {
        conflicts: conflictsAsList ? [mini] : mini,
      });
    }
  }

  createFolder(parentId: string, name: string): BoxNode {
    this.get(parentId, 'folder');
    this.assertFree(parentId, checkName(name), undefined, true);
    return this.#add('folder', parentId, name, Buffer.alloc(0));
  }

  createFile(parentId: string, name: string, content: Buffer): BoxNode {
    this.get(parentId, 'folder');
    this.assertFree(parentId, checkName(name));
    return this.#add('file', parentId, name, content);
  }

  newVersion(fileId: string, content: Buffer, name?: string): BoxNode {
    const file = this.get(fileId, 'file');
    if (name !== undefined && name !== file.name) {
      this.assertFree(file.parentId ?? '0', checkName(name), file.id);
      file.name = name;
    }
    file.content = content;
    file.sha1 = createHash('sha1').update(content).digest('hex');
    file.modifiedAt = new Date();
    file.etag += 1;
    return file;
  }

  /** POST /files/{id}/copy and PUT /files/{id} (move or rename). */
  relocate(fileId: string, parentId: string, name: string | undefined, copy: boolean): BoxNode {
    const file = this.get(fileId, 'file');
    this.get(parentId, 'folder');
    const target = checkName(name ?? file.name);
    this.assertFree(parentId, target, copy ? undefined : file.id);
    if (copy) return this.#add('file', parentId, target, file.content);
    file.parentId = parentId;
    file.name = target;
    file.modifiedAt = new Date();
    file.etag += 1;
    return file;
  }

  delete(fileId: string): void {
    this.get(fileId, 'file');
    this.items.delete(fileId);
  }

  #add(type: BoxNode['type'], parentId: string, name: string, content: Buffer): BoxNode {
    const now = new Date();
    const node: BoxNode = {
      type,
      id: String(nextId++ * 1000 + randomInt(1000)),
      name,
      parentId,
      content,
      sha1: type === 'file' ? createHash('sha1').update(content).digest('hex') : '',
      createdAt: now,
      modifiedAt: now,
      etag: 0,
    };
    this.items.set(node.id, node);
    return node;
  }
}

export function miniOf(node: BoxNode): Record<string, unknown> {
  const mini: Record<string, unknown> = {
    type: node.type,
    id: node.id,
    sequence_id: String(node.etag),
    etag: String(node.etag),
    name: node.name,
  };
  if (node.type === 'file') mini.sha1 = node.sha1;
  return mini;
}

/** The full resource; `fields` (when given) selects fields, type and id always included. */
export function resourceOf(node: BoxNode, fields?: string[]): Record<string, unknown> {
  const full: Record<string, unknown> = {
    ...miniOf(node),
    size: node.content.length,
    created_at: boxTime(node.createdAt),
    modified_at: boxTime(node.modifiedAt),
    content_modified_at: boxTime(node.modifiedAt),
    parent: node.parentId === null ? null : { type: 'folder', id: node.parentId },
    item_status: 'active',
  };
  if (!fields) return full;
  const picked: Record<string, unknown> = { type: node.type, id: node.id };
  for (const field of fields) if (field in full) picked[field] = full[field];
  return picked;
}
