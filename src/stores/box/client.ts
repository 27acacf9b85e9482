// A thin typed client for the Box API 2.0 calls ferry makes (https://developer.box.com/reference/):
// metadata calls on the api host (https://api.box.com/2.0), content uploads on the upload host
// (https://upload.box.com/api/2.0). Box addresses items by id; paths are resolved in resolve.ts.
import { randomBytes } from 'node:crypto';
import type { Egress } from '../../net/egress.js';
import type { OutboundTimeouts } from '../../net/time-bounds.js';
import type { ProviderSecret } from '../../providers.js';
import type { Secret } from '../../secret.js';
import type { AccessTokenSource } from '../context.js';
import { type CallRequest, OAuthHttp } from '../shared/http.js';
import { readBoxError } from './errors.js';

/** The fields ferry asks for on every item (the "fields" query parameter). */
export const ITEM_FIELDS = 'type,id,name,size,modified_at,sha1';

export interface BoxItem {
  type: 'file' | 'folder' | 'web_link';
  id: string;
  name: string;
  size?: number;
  modified_at?: string;
  sha1?: string;
}

export interface BoxItems {
  entries: BoxItem[];
  next_marker?: string | null;
}

export interface BoxUploadSession {
  id: string;
  part_size: number;
  total_parts: number;
  session_endpoints: { upload_part: string; commit: string; abort: string };
}

export interface BoxPart {
  part_id: string;
  offset: number;
  size: number;
  sha1: string;
}

type Call = Omit<CallRequest, 'url'> & { path: string };

export class BoxClient {
  readonly http: OAuthHttp;
  readonly #api: string;
  readonly #upload: string;

  constructor(options: {
    apiUrl: string;
    uploadUrl: string;
    secret: Secret<ProviderSecret>;
    tokens?: AccessTokenSource | undefined;
    egress: Egress;
    timeouts?: OutboundTimeouts | undefined;
  }) {
    this.#api = `${options.apiUrl.replace(/\/+$/, '')}/2.0`;
    this.#upload = `${options.uploadUrl.replace(/\/+$/, '')}/2.0`;
    this.http = new OAuthHttp({
      provider: 'box',
      secret: options.secret,
      tokens: options.tokens,
      readError: readBoxError,
      egress: options.egress,
      origins: [options.apiUrl, options.uploadUrl],
      timeouts: options.timeouts,
    });
  }

  /** The absolute URL of an api-host path. */
  apiUrl(path: string): string {
    return `${this.#api}${path}`;
  }

  /** A JSON call on the api host: path like "/folders/0/items". */
  api<T>(call: Call): Promise<T> {
    const { path, ...rest } = call;
    return this.http.json<T>({ ...rest, url: `${this.#api}${path}` });
  }

  /** The raw answer of an api-host call (downloads). */
  apiRaw(call: Call) {
    const { path, ...rest } = call;
    return this.http.send({ ...rest, url: `${this.#api}${path}` });
  }

  /** A JSON call on the upload host: path like "/files/upload_sessions". */
  upload<T>(call: Call): Promise<T> {
    const { path, ...rest } = call;
    return this.http.json<T>({ ...rest, url: `${this.#upload}${path}` });
  }

  /** The raw answer of an upload-host call (commits, which may answer 202). */
  uploadRaw(call: Call) {
    const { path, ...rest } = call;
    return this.http.send({ ...rest, url: `${this.#upload}${path}` });
  }

  /**
   * Upload File / Upload File Version (POST /files/content, POST /files/{id}/content): multipart
   * form with the "attributes" JSON part BEFORE the "file" part, as Box requires; content-md5 carries
   * the SHA-1 (hex, computed by the caller on the hashing thread) so Box checks the bytes it received.
   */
  async uploadFile(
    path: string,
    attributes: Record<string, unknown>,
    data: Buffer,
    sha1: string,
    operation: string,
    signal: AbortSignal | undefined,
  ): Promise<BoxItem> {
    const boundary = `ferry-${randomBytes(12).toString('hex')}`;
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="attributes"\r\n\r\n${JSON.stringify(attributes)}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="upload"\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const result = await this.upload<{ entries: BoxItem[] }>({
      method: 'POST',
      path,
      query: { fields: ITEM_FIELDS },
      headers: {
        'content-type': `multipart/form-data; boundary=${boundary}`,
        // "content-md5" is Box's name for the SHA-1 (hex) of the file, which it checks on arrival.
        'content-md5': sha1,
      },
      body: Buffer.concat([head, data, tail]),
      signal,
      operation,
    });
    const file = result.entries[0];
    if (!file) throw new Error(`box: ${operation}: the upload answer holds no file`);
    return file;
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
