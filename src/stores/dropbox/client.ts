// A thin typed client for the Dropbox API v2 routes ferry uses (Dropbox for HTTP Developers,
// https://www.dropbox.com/developers/documentation/http/documentation): RPC routes on the api host take
// and return JSON bodies; content routes on the content host take their argument in the
// Dropbox-API-Arg header, as "HTTP header safe" JSON (https://www.dropbox.com/developers/reference/json-encoding).
import type { Readable } from 'node:stream';
import type { Egress } from '../../net/egress.js';
import type { OutboundTimeouts } from '../../net/time-bounds.js';
import type { ProviderSecret } from '../../providers.js';
import type { Secret } from '../../secret.js';
import type { AccessTokenSource } from '../context.js';
import { type CallResponse, OAuthHttp } from '../shared/http.js';
import { readDropboxError } from './errors.js';

export interface FileMetadata {
  '.tag'?: 'file';
  name: string;
  id: string;
  path_lower?: string;
  path_display?: string;
  size: number;
  server_modified: string;
  client_modified?: string;
  rev: string;
  content_hash?: string;
}

export interface FolderMetadata {
  '.tag': 'folder';
  name: string;
  id: string;
  path_lower?: string;
  path_display?: string;
}

export interface DeletedMetadata {
  '.tag': 'deleted';
  name: string;
  path_lower?: string;
  path_display?: string;
}

export type Metadata = (FileMetadata & { '.tag': 'file' }) | FolderMetadata | DeletedMetadata;

export interface ListFolderResult {
  entries: Metadata[];
  cursor: string;
  has_more: boolean;
}

/** JSON with 0x7F and every non-ASCII UTF-16 unit written as \uXXXX, so it can ride in a header. */
export function headerSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

export class DropboxClient {
  readonly http: OAuthHttp;
  readonly #apiUrl: string;
  readonly #contentUrl: string;

  constructor(options: {
    apiUrl: string;
    contentUrl: string;
    secret: Secret<ProviderSecret>;
    tokens?: AccessTokenSource | undefined;
    egress: Egress;
    timeouts?: OutboundTimeouts | undefined;
  }) {
    this.#apiUrl = options.apiUrl.replace(/\/+$/, '');
    this.#contentUrl = options.contentUrl.replace(/\/+$/, '');
    this.http = new OAuthHttp({
      provider: 'dropbox',
      secret: options.secret,
      tokens: options.tokens,
      readError: readDropboxError,
      egress: options.egress,
      origins: [options.apiUrl, options.contentUrl],
      timeouts: options.timeouts,
    });
  }

  /** An RPC route: POST https://api.dropboxapi.com/2/<route> with a JSON argument. */
  rpc<T>(route: string, arg: unknown, what: string, signal?: AbortSignal): Promise<T> {
    return this.http.json<T>({
      method: 'POST',
      url: `${this.#apiUrl}/2/${route}`,
      json: arg,
      signal,
      operation: `${route} ${what}`,
    });
  }

  /** A content-upload route: the argument in Dropbox-API-Arg, the bytes as the body. */
  upload<T>(route: string, arg: unknown, body: Buffer, what: string, signal?: AbortSignal): Promise<T> {
    return this.http.json<T>({
      method: 'POST',
      url: `${this.#contentUrl}/2/${route}`,
      headers: { 'dropbox-api-arg': headerSafeJson(arg), 'content-type': 'application/octet-stream' },
      body,
      signal,
      operation: `${route} ${what}`,
    });
  }

  /** A content-download route; the body is the content (Range honoured with 206). */
  download(route: string, arg: unknown, range: string | undefined, what: string, signal?: AbortSignal) {
    const headers: Record<string, string> = { 'dropbox-api-arg': headerSafeJson(arg) };
    if (range) headers.range = range;
    return this.http.send({
      method: 'POST',
      url: `${this.#contentUrl}/2/${route}`,
      headers,
      signal,
      operation: `${route} ${what}`,
    }) as Promise<CallResponse & { body: Readable }>;
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
