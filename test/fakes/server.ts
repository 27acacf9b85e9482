// The server plumbing every provider fake shares: loopback listeners on ephemeral ports (one per host
// the provider has: Dropbox and Box have two), one log of the requests received, one queue of forced
// answers (faults: throttling, server errors, any recorded fixture, or one aimed at a given request),
// one of corruptions (a byte of an upload's content flipped before it is stored), and the JSON/text/range helpers the fakes answer with. What a provider says lives in its own folder;
// how bytes get on the wire here.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Fixture } from './fixtures.js';

export interface RecordedRequest {
  method: string;
  /** Path and query exactly as sent (still percent-encoded). */
  url: string;
  headers: IncomingMessage['headers'];
}

/**
 * A forced answer: status, headers and a JSON body (undefined: none) or a plain-text one, or 'pass' to
 * let one request through.
 */
export type Fault =
  | { status: number; headers?: Record<string, string>; body?: unknown; text?: string }
  | 'pass';

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export class FakeServer {
  /** Every request received, on every host, in order. */
  readonly requests: RecordedRequest[] = [];
  readonly #faults: Fault[] = [];
  readonly #aimed: { match: (request: RecordedRequest) => boolean; fault: Exclude<Fault, 'pass'> }[] = [];
  readonly #corruptions: ((request: RecordedRequest) => boolean)[] = [];
  /** Upload bodies changed by a corruption so far (corruptWhen). */
  corrupted = 0;
  readonly #servers: http.Server[] = [];

  /**
   * Listens on a new ephemeral loopback port and answers with `handler`; returns the origin. A handler
   * that throws gets `onError` (by default a 500 with the message), or a cut connection once headers
   * went out.
   */
  async listen(
    handler: Handler,
    onError: (err: unknown, res: ServerResponse) => void = (err, res) =>
      sendText(res, 500, `fake: ${String(err)}`),
  ): Promise<string> {
    const server = http.createServer((req, res) => {
      this.requests.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers });
      handler(req, res).catch((err: unknown) => {
        if (!res.headersSent) onError(err, res);
        else res.destroy();
      });
    });
    this.#servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** Queues `count` forced answers for the next requests that ask for one (see takeFault). */
  inject(fault: Fault, count = 1): void {
    for (let i = 0; i < count; i++) this.#faults.push(fault);
  }

  /**
   * The next request for which `match` holds gets `fault`, whatever requests come before it (the
   * queue of inject() is left alone for that request).
   */
  injectWhen(match: (request: RecordedRequest) => boolean, fault: Exclude<Fault, 'pass'>): void {
    this.#aimed.push({ match, fault });
  }

  /** Queues a recorded fixture as the next answer, as the provider wrote it. */
  injectFixture(recorded: Fixture, count = 1): void {
    this.inject({ status: recorded.status, headers: recorded.headers, body: recorded.body }, count);
  }

  /** Drops the forced answers and corruptions not taken yet. */
  clearFaults(): void {
    this.#faults.length = 0;
    this.#aimed.length = 0;
    this.#corruptions.length = 0;
  }

  /**
   * The next upload request for which `match` holds (by default the next one) has one byte of its
   * content flipped before the fake stores it, as a proxy changing a byte on the way would (issue 37).
   * The fake then stores and reports what it received, as the provider would.
   */
  corruptWhen(match: (request: RecordedRequest) => boolean = () => true): void {
    this.#corruptions.push(match);
  }

  /**
   * What each fake does with the content bytes of an upload request before it checks or stores them:
   * `data` as it came, or a copy with its middle byte flipped when a corruption is armed for `req`.
   */
  tamper(req: IncomingMessage, data: Buffer): Buffer {
    if (data.length === 0) return data;
    const seen = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers };
    const armed = this.#corruptions.findIndex((match) => match(seen));
    if (armed < 0) return data;
    this.#corruptions.splice(armed, 1);
    this.corrupted += 1;
    const changed = Buffer.from(data);
    const at = changed.length >> 1;
    changed[at] = (changed[at] as number) ^ 0xff;
    return changed;
  }

  /**
   * Answers the request with the next queued fault, if any: true when it did. Each fake calls this at
   * the point of its request handling where its provider would refuse (before or after the token check).
   */
  takeFault(req: IncomingMessage, res: ServerResponse): boolean {
    const seen = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers };
    const aimed = this.#aimed.findIndex((a) => a.match(seen));
    const fault = aimed >= 0 ? this.#aimed.splice(aimed, 1)[0]?.fault : this.#faults.shift();
    if (fault === undefined || fault === 'pass') return false;
    req.resume();
    if (fault.text !== undefined) {
      res.setHeader('content-type', 'text/plain; charset=utf-8');
      for (const [name, value] of Object.entries(fault.headers ?? {})) res.setHeader(name, value);
      res.statusCode = fault.status;
      res.end(fault.text);
    } else {
      sendJson(res, fault.status, fault.body, fault.headers ?? {});
    }
    return true;
  }

  async close(): Promise<void> {
    await Promise.all(
      this.#servers.map(
        (server) =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
          }),
      ),
    );
  }
}

/** The whole request body. */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A JSON answer (no body, and no Content-Type, when `body` is undefined or null). */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): undefined {
  const text = body === undefined || body === null ? '' : JSON.stringify(body);
  const all: Record<string, string | number> = { 'content-length': Buffer.byteLength(text), ...headers };
  if (text !== '') all['content-type'] = 'application/json; charset=utf-8';
  res.writeHead(status, all);
  res.end(text);
  return undefined;
}

export function sendText(res: ServerResponse, status: number, text: string): undefined {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
  return undefined;
}

/** The JSON object of a request body: {} when empty, undefined when it is not a JSON object. */
export function parseJsonObject(body: Buffer): Record<string, unknown> | undefined {
  if (body.length === 0) return {};
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // not JSON: the caller answers in its provider's words
  }
  return undefined;
}

/** A single "bytes=a-b", "bytes=a-" or "bytes=-n" (RFC 9110 14.1.2). */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'unsatisfiable' | undefined {
  const match = /^bytes=(\d*)-(\d*)$/.exec((header ?? '').trim());
  if (!match) return undefined;
  const [, a = '', b = ''] = match;
  if (a === '' && b === '') return undefined;
  if (a === '') {
    const n = Number(b);
    return n === 0 || size === 0 ? 'unsatisfiable' : { start: Math.max(size - n, 0), end: size - 1 };
  }
  const start = Number(a);
  const end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}
