// A thin typed client of Microsoft Graph's driveItem API over the shared OAuth HTTP helper. Items are
// addressed by path (/me/drive/root:/a/b.txt:) with every segment percent-encoded on its own, so "#",
// "?", "%", "+" and spaces stay inside names; or by id (/me/drive/items/{id}) once known.
// Reference: https://learn.microsoft.com/graph/api/resources/driveitem and
// https://learn.microsoft.com/graph/onedrive-addressing-driveitems

import { Readable } from 'node:stream';
import { FerryError } from '../../errors.js';
import { type CallResponse, type OAuthHttp, readText } from '../shared/http.js';
import { pages } from '../shared/paging.js';
import { splitPath } from '../shared/paths.js';

export interface DriveItem {
  id: string;
  name: string;
  size?: number;
  lastModifiedDateTime?: string;
  eTag?: string;
  parentReference?: { driveId?: string; id?: string; path?: string };
  file?: { mimeType?: string; hashes?: { quickXorHash?: string; sha1Hash?: string; sha256Hash?: string } };
  folder?: { childCount?: number };
}

interface ChildrenPage {
  value?: DriveItem[];
  '@odata.nextLink'?: string;
}

/** Children per page asked for (the service may answer fewer). */
const PAGE_SIZE = 1000;

/** A location path as a Graph path: each segment percent-encoded alone, joined with "/". */
export function encodePath(path: string): string {
  return splitPath(path).map(encodeURIComponent).join('/');
}

export function isFolderItem(item: DriveItem): boolean {
  return item.folder !== undefined || item.file === undefined;
}

export class GraphApi {
  readonly http: OAuthHttp;
  /** e.g. https://graph.microsoft.com/v1.0/me/drive */
  readonly driveUrl: string;
  readonly #origin: string;

  constructor(http: OAuthHttp, apiUrl: string, driveId?: string) {
    this.http = http;
    const base = apiUrl.replace(/\/+$/, '');
    this.driveUrl = driveId ? `${base}/drives/${encodeURIComponent(driveId)}` : `${base}/me/drive`;
    this.#origin = new URL(base).origin;
  }

  /** URL of the item at `path` ("" is the root), with an action ("children", "content", …) or none. */
  pathUrl(path: string, action = ''): string {
    if (path === '') return `${this.driveUrl}/root${action ? `/${action}` : ''}`;
    return `${this.driveUrl}/root:/${encodePath(path)}${action ? `:/${action}` : ''}`;
  }

  idUrl(id: string, action = ''): string {
    return `${this.driveUrl}/items/${encodeURIComponent(id)}${action ? `/${action}` : ''}`;
  }

  getByPath(path: string, signal: AbortSignal | undefined): Promise<DriveItem> {
    return this.http.json<DriveItem>({
      method: 'GET',
      url: this.pathUrl(path),
      signal,
      operation: `get ${path || '/'}`,
    });
  }

  getById(id: string, signal: AbortSignal | undefined, operation: string): Promise<DriveItem> {
    return this.http.json<DriveItem>({ method: 'GET', url: this.idUrl(id), signal, operation });
  }

  /** Children of a folder page by page: from its path, or from its id when given. */
  async *children(
    folder: { path: string; id?: string },
    signal: AbortSignal | undefined,
  ): AsyncGenerator<DriveItem[]> {
    const operation = `list ${folder.path || '/'}`;
    const first =
      folder.id === undefined ? this.pathUrl(folder.path, 'children') : this.idUrl(folder.id, 'children');
    const listed = pages(
      (nextLink) =>
        this.http.json<ChildrenPage>({
          method: 'GET',
          // The next link carries its own query.
          ...(nextLink === undefined ? { url: first, query: { $top: PAGE_SIZE } } : { url: nextLink }),
          signal,
          operation,
        }),
      (page) => {
        const nextLink = page['@odata.nextLink'];
        if (nextLink !== undefined && new URL(nextLink).origin !== this.#origin) {
          // The next link gets our token: it must stay on the Graph host.
          throw new FerryError('transient', `onedrive: ${operation}: next page link points to another host`);
        }
        return nextLink;
      },
    );
    for await (const page of listed) yield page.value ?? [];
  }

  /** POST …/children: a folder, or nameAlreadyExists (409) when the name is taken. */
  createFolder(parentPath: string, name: string, signal: AbortSignal | undefined): Promise<DriveItem> {
    return this.http.json<DriveItem>({
      method: 'POST',
      url: this.pathUrl(parentPath, 'children'),
      json: { name, folder: {}, '@microsoft.graph.conflictBehavior': 'fail' },
      signal,
      operation: `create folder ${parentPath === '' ? name : `${parentPath}/${name}`}`,
    });
  }

  async deleteById(id: string, signal: AbortSignal | undefined, operation: string): Promise<void> {
    await this.http.discard({ method: 'DELETE', url: this.idUrl(id), signal, operation });
  }

  /** PATCH: move (new parent) and rename, replacing an item already at the destination name. */
  move(
    id: string,
    parentId: string,
    name: string,
    signal: AbortSignal | undefined,
    operation: string,
  ): Promise<DriveItem> {
    return this.http.json<DriveItem>({
      method: 'PATCH',
      url: this.idUrl(id),
      query: { '@microsoft.graph.conflictBehavior': 'replace' },
      json: { parentReference: { id: parentId }, name },
      signal,
      operation,
    });
  }

  /** POST …/copy: 202 Accepted with the monitor URL to poll (returned). */
  async startCopy(
    id: string,
    parent: { id: string; driveId?: string },
    name: string,
    signal: AbortSignal | undefined,
    operation: string,
  ): Promise<string> {
    const res = await this.http.discard({
      method: 'POST',
      url: this.idUrl(id, 'copy'),
      query: { '@microsoft.graph.conflictBehavior': 'replace' },
      json: { parentReference: parent, name },
      signal,
      operation,
    });
    const location = firstHeader(res, 'location');
    if (!location) throw new FerryError('transient', `onedrive: ${operation}: no monitor URL in the answer`);
    return location;
  }

  /** One poll of a monitor URL (pre-authenticated: called without the token). */
  async pollMonitor(
    url: string,
    signal: AbortSignal | undefined,
    operation: string,
  ): Promise<{ status: number; body: unknown }> {
    const res = await this.http.send({
      method: 'GET',
      url,
      anonymous: true,
      accept: [202, 303],
      signal,
      operation,
    });
    const text = await readText(res.body, 1024 * 1024);
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: res.status, body };
  }

  /**
   * The content of the item at `path`: GET …/content answers 302 to a pre-authenticated URL, fetched
   * without the token (it is another host), with the byte range when given.
   */
  async download(
    path: string,
    range: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Readable> {
    const operation = `download ${path}`;
    const res = await this.http.send({
      method: 'GET',
      url: this.pathUrl(path, 'content'),
      accept: [302],
      signal,
      operation,
    });
    if (res.status !== 302) return res.body; // served in place
    res.body.resume();
    const location = firstHeader(res, 'location');
    if (!location) throw new FerryError('transient', `onedrive: ${operation}: redirect without a location`);
    const content = await this.http.send({
      method: 'GET',
      url: new URL(location, this.driveUrl).toString(),
      anonymous: true,
      headers: range ? { range } : {},
      accept: [416],
      signal,
      operation,
    });
    if (content.status === 416) {
      content.body.resume();
      return Readable.from([]); // the range starts at or past the end
    }
    return content.body;
  }
}

export function firstHeader(res: CallResponse, name: string): string | undefined {
  const value = res.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
