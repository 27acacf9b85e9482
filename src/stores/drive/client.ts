// A thin typed client of the Google Drive API v3 over the shared OAuth HTTP helper: the metadata calls
// the store needs (files.list with q and paging, get, create folder, update, copy, delete) and the
// ranged download. Drive addresses files by id; turning paths into ids is resolve.ts's job.
// Reference: https://developers.google.com/drive/api/reference/rest/v3/files

import type { Readable } from 'node:stream';
import type { OAuthHttp } from '../shared/http.js';
import { pages } from '../shared/paging.js';

export const FOLDER_MIME = 'application/vnd.google-apps.folder';
/** Google-native documents (Docs, Sheets, …) have this prefix, and no size, md5 or binary content. */
export const GOOGLE_NATIVE_PREFIX = 'application/vnd.google-apps.';

/** The File fields the store asks for (partial responses: the API answers only what is asked). */
export const FILE_FIELDS = 'id,name,mimeType,size,md5Checksum,sha1Checksum,sha256Checksum,modifiedTime';

export interface DriveFile {
  id: string;
  name: string;
  mimeType: string;
  /** int64 as a decimal string; absent for folders and Google-native documents. */
  size?: string;
  md5Checksum?: string;
  sha1Checksum?: string;
  sha256Checksum?: string;
  modifiedTime?: string;
}

interface FileList {
  nextPageToken?: string;
  files?: DriveFile[];
}

/** The largest page files.list gives. */
const PAGE_SIZE = 1000;

/** A string literal of the Drive search language: quotes and backslashes escaped with "\". */
export function queryString(value: string): string {
  return `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

export function isFolder(file: DriveFile): boolean {
  return file.mimeType === FOLDER_MIME;
}

export function isGoogleNative(file: DriveFile): boolean {
  return file.mimeType.startsWith(GOOGLE_NATIVE_PREFIX) && !isFolder(file);
}

export class DriveApi {
  readonly http: OAuthHttp;
  readonly apiUrl: string;

  constructor(http: OAuthHttp, apiUrl: string) {
    this.http = http;
    this.apiUrl = apiUrl.replace(/\/+$/, '');
  }

  #fileUrl(id: string, suffix = ''): string {
    return `${this.apiUrl}/drive/v3/files/${encodeURIComponent(id)}${suffix}`;
  }

  /**
   * The live children of a folder, page by page; with `name`, only those of that exact name.
   * https://developers.google.com/drive/api/guides/search-files
   */
  async *children(
    parentId: string,
    options: { name?: string; signal?: AbortSignal | undefined; operation: string },
  ): AsyncGenerator<DriveFile[]> {
    let q = `${queryString(parentId)} in parents and trashed = false`;
    if (options.name !== undefined) q += ` and name = ${queryString(options.name)}`;
    const listed = pages(
      (pageToken) =>
        this.http.json<FileList>({
          method: 'GET',
          url: `${this.apiUrl}/drive/v3/files`,
          query: {
            q,
            fields: `nextPageToken,files(${FILE_FIELDS})`,
            pageSize: PAGE_SIZE,
            pageToken,
            supportsAllDrives: true,
            includeItemsFromAllDrives: true,
          },
          signal: options.signal,
          operation: options.operation,
        }),
      (page) => page.nextPageToken,
    );
    for await (const page of listed) yield page.files ?? [];
  }

  /** Every live child named `name` (Drive allows several). */
  async named(
    parentId: string,
    name: string,
    signal: AbortSignal | undefined,
    operation: string,
  ): Promise<DriveFile[]> {
    const out: DriveFile[] = [];
    for await (const page of this.children(parentId, { name, signal, operation })) out.push(...page);
    return out;
  }

  get(id: string, signal: AbortSignal | undefined, operation: string): Promise<DriveFile> {
    return this.http.json<DriveFile>({
      method: 'GET',
      url: this.#fileUrl(id),
      query: { fields: FILE_FIELDS, supportsAllDrives: true },
      signal,
      operation,
    });
  }

  createFolder(
    parentId: string,
    name: string,
    signal: AbortSignal | undefined,
    operation: string,
  ): Promise<DriveFile> {
    return this.http.json<DriveFile>({
      method: 'POST',
      url: `${this.apiUrl}/drive/v3/files`,
      query: { fields: FILE_FIELDS, supportsAllDrives: true },
      json: { name, mimeType: FOLDER_MIME, parents: [parentId] },
      signal,
      operation,
    });
  }

  /** files.update: rename, and move with addParents/removeParents (parents is not writable in the body). */
  update(
    id: string,
    change: { name?: string; addParents?: string; removeParents?: string },
    signal: AbortSignal | undefined,
    operation: string,
  ): Promise<DriveFile> {
    return this.http.json<DriveFile>({
      method: 'PATCH',
      url: this.#fileUrl(id),
      query: {
        fields: FILE_FIELDS,
        supportsAllDrives: true,
        addParents: change.addParents,
        removeParents: change.removeParents,
      },
      json: change.name === undefined ? {} : { name: change.name },
      signal,
      operation,
    });
  }

  copy(
    id: string,
    name: string,
    parentId: string,
    signal: AbortSignal | undefined,
    operation: string,
  ): Promise<DriveFile> {
    return this.http.json<DriveFile>({
      method: 'POST',
      url: this.#fileUrl(id, '/copy'),
      query: { fields: FILE_FIELDS, supportsAllDrives: true },
      json: { name, parents: [parentId] },
      signal,
      operation,
    });
  }

  /** files.delete: removes the file for good (it does not go to the trash). */
  async delete(id: string, signal: AbortSignal | undefined, operation: string): Promise<void> {
    await this.http.discard({
      method: 'DELETE',
      url: this.#fileUrl(id),
      query: { supportsAllDrives: true },
      signal,
      operation,
    });
  }

  /** files.get alt=media, with an inclusive byte range when given. */
  async download(
    id: string,
    range: { start: number; end: number } | undefined,
    signal: AbortSignal | undefined,
    operation: string,
  ): Promise<Readable> {
    const res = await this.http.send({
      method: 'GET',
      url: this.#fileUrl(id),
      query: { alt: 'media', supportsAllDrives: true },
      headers: range ? { range: `bytes=${range.start}-${range.end}` } : {},
      signal,
      operation,
    });
    return res.body;
  }
}
