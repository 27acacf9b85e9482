// A loopback HTTP reverse proxy that stands in front of a real local server (s3rver, azurite) and
// injects the faults those servers cannot produce themselves: a provider's throttle answer
// (failNext), a connection cut in the middle of a response (dropNext) or before its body
// (cutBodyNext), and response headers other than the server's own (headersNext). Everything else
// passes through untouched, Host header included, so signatures still match.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FaultAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export interface FaultProxy {
  /** Base URL of the proxy, e.g. http://127.0.0.1:41234 */
  readonly url: string;
  readonly port: number;
  /** Requests seen so far (faulted ones included). */
  readonly requests: number;
  /** Each request seen so far, in order: its method, URL, and whether it named a copy source (S3). */
  readonly seen: ReadonlyArray<SeenRequest>;
  /** The next `count` requests are answered with `answer` instead of reaching the server. */
  failNext(count: number, answer: FaultAnswer): void;
  /**
   * The next `count` requests reach the server, but the connection is cut partway through the
   * response: after the headers and part of the body (once `cutWhen` resolves, when given), or before
   * anything when there is no body.
   */
  dropNext(count: number, cutWhen?: Promise<void>): void;
  /**
   * The next `count` requests reach the server and get its status and headers, then the connection
   * is cut before the first byte of the body: a source that fails as it opens.
   */
  cutBodyNext(count: number): void;
  /** The next `count` requests pass, with `headers` (lower-case names) in place of the server's. */
  headersNext(count: number, headers: Record<string, string>): void;
  /** The next `count` requests pass untouched (so that a fault queued after them hits a later one). */
  passNext(count: number): void;
  /** Bytes of request bodies received so far (what clients sent towards the server). */
  readonly requestBytes: number;
  /** Bytes of the request bodies the server answered with a 2xx: what it acknowledged receiving. */
  readonly acceptedBytes: number;
  /** The next request for which `match` holds is answered with `answer`; the others pass. */
  failWhen(match: (request: SeenRequest) => boolean, answer: FaultAnswer): void;
  /** Forgets any faults still queued. */
  reset(): void;
  close(): Promise<void>;
}

export interface SeenRequest {
  method: string;
  url: string;
  copySource: boolean;
}

type Fault =
  | { kind: 'fail'; answer: FaultAnswer }
  | { kind: 'drop'; cutWhen?: Promise<void> }
  | { kind: 'cut-body' }
  | { kind: 'headers'; headers: Record<string, string> }
  | { kind: 'pass' };

export async function startFaultProxy(target: string | URL): Promise<FaultProxy> {
  const upstream = new URL(target);
  const agent = new http.Agent({ keepAlive: true });
  const faults: Fault[] = [];
  let requests = 0;
  let requestBytes = 0;
  let acceptedBytes = 0;
  const seen: SeenRequest[] = [];
  const matchers: Array<{ match: (request: SeenRequest) => boolean; answer: FaultAnswer }> = [];

  const server = http.createServer((req, res) => {
    requests++;
    const request = {
      method: req.method ?? '',
      url: req.url ?? '',
      copySource: req.headers['x-amz-copy-source'] !== undefined,
    };
    seen.push(request);
    let bodyBytes = 0;
    req.on('data', (chunk: Buffer) => {
      requestBytes += chunk.length;
      bodyBytes += chunk.length;
    });
    const matched = matchers.findIndex((m) => m.match(request));
    const fault: Fault | undefined =
      matched >= 0
        ? { kind: 'fail', answer: matchers.splice(matched, 1)[0]?.answer as FaultAnswer }
        : faults.shift();

    if (fault?.kind === 'fail') {
      // Read the request body to the end first, as a real server would, so the client is not cut off
      // while still sending.
      req.resume();
      req.on('end', () => {
        const { status, headers = {}, body } = fault.answer;
        const payload = req.method === 'HEAD' || body === undefined ? undefined : Buffer.from(body);
        res.writeHead(status, {
          ...headers,
          ...(payload ? { 'content-length': String(payload.length) } : { 'content-length': '0' }),
        });
        res.end(payload);
      });
      return;
    }

    const forward = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
        agent,
      },
      (answer) => {
        const status = answer.statusCode ?? 502;
        if (status >= 200 && status < 300) acceptedBytes += bodyBytes;
        if (fault?.kind === 'drop') {
          const hasBody = req.method !== 'HEAD' && answer.headers['content-length'] !== '0';
          if (!hasBody) {
            answer.resume();
            req.socket.destroy();
            return;
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.once('data', (chunk: Buffer) => {
            res.write(chunk.subarray(0, Math.max(1, Math.floor(chunk.length / 2))), () => {
              answer.pause();
              void (fault.cutWhen ?? Promise.resolve()).then(() => {
                answer.destroy();
                req.socket.destroy();
              });
            });
          });
          answer.once('end', () => {
            if (!fault.cutWhen) req.socket.destroy();
          });
          return;
        }
        if (fault?.kind === 'cut-body') {
          answer.destroy();
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.flushHeaders();
          // The headers go out, then the connection ends short of its body.
          req.socket.end();
          return;
        }
        if (fault?.kind === 'headers') {
          res.writeHead(answer.statusCode ?? 502, { ...answer.headers, ...fault.headers });
          answer.pipe(res);
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    forward.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(forward);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    get requests() {
      return requests;
    },
    seen,
    failNext(count, answer) {
      for (let i = 0; i < count; i++) faults.push({ kind: 'fail', answer });
    },
    dropNext(count, cutWhen) {
      for (let i = 0; i < count; i++) faults.push(cutWhen ? { kind: 'drop', cutWhen } : { kind: 'drop' });
    },
    cutBodyNext(count) {
      for (let i = 0; i < count; i++) faults.push({ kind: 'cut-body' });
    },
    headersNext(count, headers) {
      for (let i = 0; i < count; i++) faults.push({ kind: 'headers', headers });
    },
    passNext(count) {
      for (let i = 0; i < count; i++) faults.push({ kind: 'pass' });
    },
    get requestBytes() {
      return requestBytes;
    },
    get acceptedBytes() {
      return acceptedBytes;
    },
    failWhen(match, answer) {
      matchers.push({ match, answer });
    },
    reset() {
      faults.length = 0;
      matchers.length = 0;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
