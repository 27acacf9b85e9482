// The fake Drive's in-memory file table: files addressed by id, each with parents (Drive allows
// several names alike in one folder, so paths here resolve to the first match, as a user would see).
// Resource shape: https://developers.google.com/drive/api/reference/rest/v3/files
import { createHash, randomBytes } from 'node:crypto';

export const FOLDER_MIME = 'application/vnd.google-apps.folder';

export interface DriveFile {
  id: string;
  name: string;
  mimeType: string;
  parents: string[];
  trashed: boolean;
  createdTime: Date;
  modifiedTime: Date;
  /** Bytes of a binary file; undefined for folders and Google-native documents. */
  content?: Buffer;
}

export function newId(): string {
  // Drive ids are ~33 characters of [A-Za-z0-9_-].
  return randomBytes(25).toString('base64url').slice(0, 33);
}

export function isGoogleNative(file: DriveFile): boolean {
  return file.mimeType.startsWith('application/vnd.google-apps.');
}

/** The v3 File resource as the API answers it (before `fields` selection). */
export function toResource(file: DriveFile): Record<string, unknown> {
  const resource: Record<string, unknown> = {
    kind: 'drive#file',
    id: file.id,
    name: file.name,
    mimeType: file.mimeType,
    parents: file.parents,
    trashed: file.trashed,
    createdTime: file.createdTime.toISOString(),
    modifiedTime: file.modifiedTime.toISOString(),
  };
  if (file.content !== undefined) {
    // int64 values are JSON strings in Google APIs.
    resource.size = String(file.content.length);
    resource.md5Checksum = createHash('md5').update(file.content).digest('hex');
    resource.sha1Checksum = createHash('sha1').update(file.content).digest('hex');
    resource.sha256Checksum = createHash('sha256').update(file.content).digest('hex');
  }
  return resource;
}

/** An open resumable upload (https://developers.google.com/drive/api/guides/manage-uploads#resumable). */
export interface ResumableSession {
  /** Set when the session updates an existing file (PATCH), unset when it creates one (POST). */
  fileId?: string;
  metadata: Record<string, unknown>;
  /** X-Upload-Content-Type of the initiating request. */
  contentType?: string;
  chunks: Buffer[];
  received: number;
  done?: DriveFile;
}

export class DriveState {
  readonly files = new Map<string, DriveFile>();
  readonly sessions = new Map<string, ResumableSession>();
  readonly rootId: string;

  constructor() {
    this.rootId = newId();
    const now = new Date();
    this.files.set(this.rootId, {
      id: this.rootId,
      name: 'My Drive',
      mimeType: FOLDER_MIME,
      parents: [],
      trashed: false,
      createdTime: now,
      modifiedTime: now,
    });
  }

  /** Maps the 'root' alias to the root folder's id. */
  resolveId(id: string): string {
    return id === 'root' ? this.rootId : id;
  }

  get(id: string): DriveFile | undefined {
    return this.files.get(this.resolveId(id));
  }

  children(parentId: string): DriveFile[] {
    const id = this.resolveId(parentId);
    return [...this.files.values()].filter((f) => f.parents.includes(id) && !f.trashed);
  }

  create(fields: { name: string; mimeType: string; parents: string[]; content?: Buffer }): DriveFile {
    const now = new Date();
    const file: DriveFile = {
      id: newId(),
      name: fields.name,
      mimeType: fields.mimeType,
      parents: fields.parents.map((p) => this.resolveId(p)),
      trashed: false,
      createdTime: now,
      modifiedTime: now,
    };
    if (fields.content !== undefined) file.content = fields.content;
    this.files.set(file.id, file);
    return file;
  }

  /** Deletes a file, or a folder with everything under it (files.delete skips the trash). */
  delete(id: string): undefined {
    const resolved = this.resolveId(id);
    for (const child of this.children(resolved)) this.delete(child.id);
    this.files.delete(resolved);
  }

  /** First file reached by walking names from the root, or undefined. */
  lookup(path: string): DriveFile | undefined {
    let current = this.files.get(this.rootId);
    for (const name of path.split('/').filter((s) => s !== '')) {
      if (!current) return undefined;
      current = this.children(current.id).find((f) => f.name === name);
    }
    return current;
  }

  /** Folder at path, created (with its parents) when missing. */
  ensureFolder(path: string): DriveFile {
    let current = this.files.get(this.rootId) as DriveFile;
    for (const name of path.split('/').filter((s) => s !== '')) {
      const found = this.children(current.id).find((f) => f.name === name && f.mimeType === FOLDER_MIME);
      current = found ?? this.create({ name, mimeType: FOLDER_MIME, parents: [current.id] });
    }
    return current;
  }
}
