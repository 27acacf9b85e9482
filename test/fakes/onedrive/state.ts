// The fake OneDrive's in-memory drive: a tree of driveItems (one name per folder, compared without
// regard to case as OneDrive does), and the driveItem JSON Graph answers.
// Resource: https://learn.microsoft.com/graph/api/resources/driveitem
// Hashes: https://learn.microsoft.com/graph/api/resources/hashes (quickXorHash on every drive, sha1Hash
// on OneDrive Personal only).
import { createHash, randomBytes } from 'node:crypto';
import { quickXorBase64 } from './quickxor.js';

export type DriveType = 'personal' | 'business';

export interface Item {
  id: string;
  name: string;
  /** undefined for the root. */
  parentId: string | undefined;
  /** Bytes of a file; undefined for folders. */
  content?: Buffer;
  mimeType?: string;
  createdDateTime: Date;
  lastModifiedDateTime: Date;
  version: number;
}

/** An open upload session (https://learn.microsoft.com/graph/api/driveitem-createuploadsession). */
export interface UploadSession {
  parentId: string;
  name: string;
  conflictBehavior: 'fail' | 'replace' | 'rename';
  total?: number;
  chunks: Buffer[];
  received: number;
  expires: Date;
}

export type CopyResult =
  | { status: 'completed'; resourceId: string }
  | { status: 'failed'; code: string; message: string };

/** A copy in progress, polled through its monitor URL; `run` makes the copy when it completes. */
export interface CopyJob {
  polls: number;
  run: () => CopyResult;
  result?: CopyResult;
}

/**
 * Characters OneDrive and SharePoint refuse in names: " * : < > ? / \ | (and leading or trailing
 * spaces). https://support.microsoft.com/office/64883a5d-228e-48f5-b3d2-eb39e07630fa ("Invalid characters")
 */
export function invalidName(name: string): boolean {
  return name === '' || /["*:<>?/\\|]/.test(name) || name !== name.trim();
}

export class OneDriveState {
  readonly items = new Map<string, Item>();
  readonly sessions = new Map<string, UploadSession>();
  readonly copies = new Map<string, CopyJob>();
  readonly downloads = new Map<string, { itemId: string; expires: number }>();
  readonly rootId: string;
  readonly driveId = randomBytes(8).toString('hex');

  constructor(readonly driveType: DriveType) {
    this.rootId = this.newId();
    const now = new Date();
    this.items.set(this.rootId, {
      id: this.rootId,
      name: 'root',
      parentId: undefined,
      createdDateTime: now,
      lastModifiedDateTime: now,
      version: 1,
    });
  }

  newId(): string {
    return randomBytes(12).toString('hex').toUpperCase();
  }

  get root(): Item {
    return this.items.get(this.rootId) as Item;
  }

  isFolder(item: Item): boolean {
    return item.content === undefined;
  }

  children(parentId: string): Item[] {
    return [...this.items.values()]
      .filter((i) => i.parentId === parentId)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  child(parentId: string, name: string): Item | undefined {
    const lower = name.toLowerCase();
    return [...this.items.values()].find((i) => i.parentId === parentId && i.name.toLowerCase() === lower);
  }

  /** The item at `segments` under `from` (default: root), or undefined. */
  walk(segments: string[], from: Item = this.root): Item | undefined {
    let current: Item | undefined = from;
    for (const name of segments) {
      if (!current || !this.isFolder(current)) return undefined;
      current = this.child(current.id, name);
    }
    return current;
  }

  pathOf(item: Item): string {
    const names: string[] = [];
    for (let i: Item | undefined = item; i && i.parentId !== undefined; i = this.items.get(i.parentId)) {
      names.unshift(i.name);
    }
    return names.join('/');
  }

  create(parentId: string, name: string, content?: Buffer, mimeType?: string): Item {
    const now = new Date();
    const item: Item = {
      id: this.newId(),
      name,
      parentId,
      createdDateTime: now,
      lastModifiedDateTime: now,
      version: 1,
    };
    if (content !== undefined) {
      item.content = content;
      item.mimeType = mimeType ?? 'application/octet-stream';
    }
    this.items.set(item.id, item);
    return item;
  }

  delete(id: string): undefined {
    for (const child of this.children(id)) this.delete(child.id);
    this.items.delete(id);
  }

  /** A name not taken in the folder, after "rename" conflict behaviour ("a 1.txt"). */
  freeName(parentId: string, name: string): string {
    if (!this.child(parentId, name)) return name;
    const dot = name.lastIndexOf('.');
    const stem = dot > 0 ? name.slice(0, dot) : name;
    const ext = dot > 0 ? name.slice(dot) : '';
    for (let n = 1; ; n++) {
      const candidate = `${stem} ${n}${ext}`;
      if (!this.child(parentId, candidate)) return candidate;
    }
  }

  /** The driveItem resource. */
  toJson(item: Item, origin: string, withDownloadUrl = false): Record<string, unknown> {
    const json: Record<string, unknown> = {
      id: item.id,
      name: item.name,
      eTag: `"{${item.id}},${item.version}"`,
      cTag: `"c:{${item.id}},${item.version}"`,
      createdDateTime: item.createdDateTime.toISOString(),
      lastModifiedDateTime: item.lastModifiedDateTime.toISOString(),
      size: item.content?.length ?? this.#treeSize(item),
      fileSystemInfo: {
        createdDateTime: item.createdDateTime.toISOString(),
        lastModifiedDateTime: item.lastModifiedDateTime.toISOString(),
      },
    };
    if (item.parentId === undefined) {
      json.root = {};
      json.parentReference = { driveId: this.driveId, driveType: this.driveType };
    } else {
      const parent = this.items.get(item.parentId) as Item;
      const parentPath = this.pathOf(parent);
      json.parentReference = {
        driveId: this.driveId,
        driveType: this.driveType,
        id: parent.id,
        path: parentPath === '' ? '/drive/root:' : `/drive/root:/${encodeURI(parentPath)}`,
      };
    }
    if (item.content === undefined) {
      json.folder = { childCount: this.children(item.id).length };
    } else {
      const hashes: Record<string, string> = { quickXorHash: quickXorBase64(item.content) };
      if (this.driveType === 'personal') {
        hashes.sha1Hash = createHash('sha1').update(item.content).digest('hex').toUpperCase();
      }
      json.file = { mimeType: item.mimeType, hashes };
      if (withDownloadUrl) json['@microsoft.graph.downloadUrl'] = this.downloadUrl(item, origin);
    }
    return json;
  }

  /** A short-lived pre-authenticated URL for the content (what /content redirects to). */
  downloadUrl(item: Item, origin: string): string {
    const token = randomBytes(16).toString('base64url');
    this.downloads.set(token, { itemId: item.id, expires: Date.now() + 60 * 60 * 1000 });
    return `${origin}/download/${token}?tempauth=${randomBytes(8).toString('hex')}`;
  }

  #treeSize(item: Item): number {
    let size = 0;
    for (const child of this.children(item.id)) size += child.content?.length ?? this.#treeSize(child);
    return size;
  }
}
