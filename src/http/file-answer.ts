// A stored file as an HTTP answer, for every route that serves one: share links (docs/api.md, "Share
// links") and files through ferry (docs/api.md, "Files through ferry"). Its type, length, an attachment
// Content-Disposition (an ASCII filename and the RFC 6266 filename*: attachment()), its ETag or
// Last-Modified, and byte ranges (Range, If-Range, 206, 416) so that a download resumes, and the headers
// that keep a stored page from running as this origin's (src/http/security-headers.ts). What a route
// does around the answer (counting a download,
// watching a key) stays in the route.
import type { Readable } from 'node:stream';
import contentDisposition from 'content-disposition';
import type { FastifyReply, FastifyRequest } from 'fastify';
import rangeParser from 'range-parser';
import { withoutBidiControls } from '../display.js';
import type { ObjectInfo } from '../stores/contract.js';
import { securityHeaders } from './security-headers.js';

export interface ByteRange {
  start: number;
  /** Inclusive. */
  end: number;
}

/** What the answer carries: the whole file, or one range of it. */
export interface FilePart {
  range: ByteRange | undefined;
  /** Content-Length of the answer. */
  length: number;
}

/**
 * Characters NFKD does not take apart into ASCII, as people write them in ASCII (RFC 6266, Appendix D:
 * "substituting characters with US-ASCII sequences"); the typographic dashes and quotes too.
 */
const ASCII_FOR: Record<string, string> = {
  ß: 'ss',
  æ: 'ae',
  Æ: 'AE',
  œ: 'oe',
  Œ: 'OE',
  ø: 'o',
  Ø: 'O',
  đ: 'd',
  Đ: 'D',
  ð: 'd',
  Ð: 'D',
  ł: 'l',
  Ł: 'L',
  þ: 'th',
  Þ: 'Th',
  '\u2010': '-',
  '\u2011': '-',
  '\u2012': '-',
  '\u2013': '-',
  '\u2014': '-',
  '\u2018': "'",
  '\u2019': "'",
  '\u201a': "'",
  '\u201c': "'",
  '\u201d': "'",
  '\u201e': "'",
};

/**
 * `name` in printable ASCII, for the `filename` parameter that clients without RFC 6266 `filename*`
 * read (curl's -J reads only `filename`): accents dropped, the letters above spelled out, a double
 * quote as `'` and a backslash as `_` (clients disagree on escapes inside a quoted string: curl and
 * wget cut the name at `\"`), a `%` before two hex digits as `_` (some clients decode it), and each run
 * of anything else as `_`. A name left with no letter or digit before its extension is `download`.
 */
export function asciiFileName(name: string): string {
  const ascii = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]/g, (c) => ASCII_FOR[c] ?? '\0')
    .replace(/\0+/g, '_')
    .replace(/"/g, "'")
    .replace(/\\/g, '_')
    .replace(/%(?=[0-9A-Fa-f]{2})/g, '_');
  if (ascii === name) return name;
  const ext = /\.[A-Za-z0-9]{1,16}$/.exec(ascii)?.[0] ?? '';
  return /[A-Za-z0-9]/.test(ascii.slice(0, ascii.length - ext.length)) ? ascii : `download${ext}`;
}

/**
 * The Content-Disposition of a download saved as `name`: `attachment` with an ASCII `filename`
 * (asciiFileName) and, when that is not the name itself, the name in UTF-8 as `filename*` (RFC 6266,
 * RFC 8187), which browsers and wget prefer. Every download ferry serves names its file here.
 */
export function attachment(name: string): string {
  return contentDisposition(name, { type: 'attachment', fallback: asciiFileName(name) });
}

/** The last segment of a path: the name a file is saved under. */
export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** An ETag as HTTP writes it: quoted (S3 gives it quoted, others may not). */
export function quoted(etag: string): string {
  return etag.startsWith('"') || etag.startsWith('W/') ? etag : `"${etag}"`;
}

/**
 * If-Range (RFC 9110 13.1.5): whether a range may be served, that is whether the validator names the
 * version at hand. An entity tag is compared strongly: a weak one (`W/"…"`), given or current, never
 * matches, so the whole file goes out. A date must equal Last-Modified exactly.
 */
export function rangeStillValid(
  ifRange: string | undefined,
  etag: string | undefined,
  lastModified: string | undefined,
): boolean {
  if (ifRange === undefined) return true;
  const validator = ifRange.trim();
  if (validator.startsWith('W/')) return false;
  // A strong tag cannot equal a weak one: the W/ prefix differs.
  if (validator.startsWith('"')) return validator === etag;
  return lastModified !== undefined && validator === lastModified;
}

/**
 * Sets the headers and status of the file at `path` for `request` (its Range and If-Range unless
 * `ranges` is false: a form's POST), and says which bytes to send. A range past the end is answered here (416, with
 * a Content-Range of `bytes *` and the size) and gives undefined: the caller sends nothing more.
 */
export function fileAnswer(
  request: FastifyRequest,
  reply: FastifyReply,
  info: ObjectInfo,
  options: { ranges: boolean; path: string },
): FilePart | undefined {
  const size = info.size;
  const etag = info.etag === undefined ? undefined : quoted(info.etag);
  const lastModified = info.modTime?.toUTCString();
  // Served with its stored type, a file must not run as this origin's page (HTML, SVG).
  securityHeaders(reply);
  reply.header('accept-ranges', 'bytes');
  // Bidi controls are dropped from the name the file is saved under (src/display.ts).
  const saveAs = withoutBidiControls(baseName(options.path)) || 'download';
  reply.header('content-disposition', attachment(saveAs));
  reply.header('content-type', info.mimeType ?? 'application/octet-stream');
  if (etag) reply.header('etag', etag);
  if (lastModified) reply.header('last-modified', lastModified);

  let range: ByteRange | undefined;
  const header = options.ranges ? request.headers.range : undefined;
  // If-Range: the range only for the same version, else the whole file.
  const ifRange = request.headers['if-range'] as string | undefined;
  if (header !== undefined && rangeStillValid(ifRange, etag, lastModified)) {
    const ranges = rangeParser(size, header, { combine: true });
    if (ranges === -1) {
      reply.header('content-range', `bytes */${size}`);
      reply.code(416).type('text/plain; charset=utf-8').send('range not satisfiable\n');
      return undefined;
    }
    // A malformed header, or several ranges: the whole file (RFC 9110 allows either).
    if (ranges !== -2 && ranges.type === 'bytes' && ranges.length === 1 && ranges[0]) range = ranges[0];
  }
  const length = range ? range.end - range.start + 1 : size;
  reply.code(range ? 206 : 200);
  reply.header('content-length', String(length));
  if (range) reply.header('content-range', `bytes ${range.start}-${range.end}/${size}`);
  return { range, length };
}

/** The store read that gives the bytes of `part`. */
export function readOptions(part: FilePart): { range?: { offset: number; length: number } } {
  return part.range ? { range: { offset: part.range.start, length: part.length } } : {};
}

/** Takes back the file's headers when another answer (an error, a page) goes instead of the file. */
export function clearFileHeaders(reply: FastifyReply): void {
  for (const name of [
    'content-length',
    'content-range',
    'content-disposition',
    'content-type',
    'etag',
    'last-modified',
    'accept-ranges',
  ]) {
    reply.removeHeader(name);
  }
}

/**
 * Resolves when the stream has its first bytes buffered (or has ended: an empty file), rejects when it
 * fails or closes before. The bytes stay buffered for whoever reads the stream next.
 */
export function firstBytes(body: Readable): Promise<void> {
  if (body.readableLength > 0 || body.readableEnded) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const settle = (err?: unknown) => {
      body.off('readable', ready);
      body.off('error', settle);
      body.off('close', closed);
      if (err === undefined) resolve();
      else reject(err);
    };
    const ready = () => settle();
    const closed = () => settle(new Error('the source closed before its first byte'));
    body.once('readable', ready);
    body.once('error', settle);
    body.once('close', closed);
  });
}

/**
 * Sends the file's bytes. An error after the headers went out aborts the connection, so a cut file is
 * never presented as complete: the client sees the connection end short of Content-Length.
 */
export function sendFileBody(reply: FastifyReply, body: Readable) {
  body.once('error', (err) => {
    if (reply.raw.headersSent) reply.raw.destroy(err);
  });
  return reply.send(body);
}
