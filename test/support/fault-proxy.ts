// A loopback HTTP reverse proxy that stands in front of a real local server (s3rver, azurite, a
// provider fake) and injects the faults those servers cannot produce themselves: a provider's
// throttle or error answer (failNext), a connection cut in the middle of a response (dropNext) or
// before its body (cutBodyNext), response headers other than the server's own (headersNext), an
// answer that comes late (delayNext), a body shorter than its Content-Length ended cleanly, on the
// answer or on the request on its way to the server (truncateNext), a body that stops and never goes
// on (stallNext), a kept-alive connection reset when it is used again (resetReusedNext), and a request
// body that reaches the server with one byte changed (corrupt: an upload damaged on the way).
// Everything else passes through untouched, Host header included, so signatures still match.
//
// Faults queued with `inject` and a `match` (and failWhen's) are aimed: they wait for a request the
// match accepts. The others hit the next requests in arrival order, whatever those are.
import http from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import { Transform } from 'node:stream';

export interface FaultAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export type Fault =
  /** Answered with `answer`; the request never reaches the server. */
  | { kind: 'fail'; answer: FaultAnswer }
  /** The server's answer, cut (destroyed) after part of its body, once `cutWhen` resolves when given. */
  | { kind: 'drop'; cutWhen?: Promise<void> }
  /** The server's status and headers, then the connection ends before the first byte of the body. */
  | { kind: 'cut-body' }
  /** The server's answer with `headers` (lower-case names) in place of its own. */
  | { kind: 'headers'; headers: Record<string, string> }
  /** Passes untouched (so that a fault queued after it hits a later request). */
  | { kind: 'pass' }
  /**
   * The server's answer, held back `ms` before its first byte goes out; with `until`, held until it
   * resolves instead.
   */
  | { kind: 'delay'; ms: number; until?: Promise<void> }
  /**
   * A body cut to half its bytes, Content-Length unchanged, then the connection ended cleanly (FIN):
   * the server's answer (`side: 'answer'`), or the request's body on its way to the server, whose
   * connection is ended the same way, and then the client's, without an answer (`side: 'request'`).
   * `unframed`: the answer goes out without Content-Length, its end marked by the connection's end
   * (HTTP/1.1 allows it), so that the HTTP client itself cannot tell the short body from a whole one.
   */
  | { kind: 'truncate'; side: 'answer' | 'request'; unframed?: boolean }
  /** Headers and part of the body, then nothing, until the client gives up or the stall is released. */
  | { kind: 'stall' }
  /**
   * The whole answer, but without Content-Length, its end marked by the connection's end (HTTP/1.1
   * allows it; some gateways answer so).
   */
  | { kind: 'unframed' }
  /**
   * A body with its middle byte inverted, its length unchanged: the request's on its way to the
   * server (an upload damaged on the way; the default), or the server's answer (a download), which
   * only a checksum can tell (docs/api.md, "Verification").
   */
  | { kind: 'corrupt'; side?: 'request' | 'answer' };

export interface FaultProxy {
  /** Base URL of the proxy, e.g. http://127.0.0.1:41234 */
  readonly url: string;
  readonly port: number;
  /** Requests seen so far (faulted ones included). */
  readonly requests: number;
  /** Each request seen so far, in order: its method, URL, headers, and whether it named a copy source (S3). */
  readonly seen: ReadonlyArray<SeenRequest>;
  /**
   * The next `count` requests (default 1) get `fault`; with `match`, the next `count` for which it
   * holds (the others pass, and the queue of unaimed faults is left alone for those it takes).
   */
  inject(fault: Fault, options?: { count?: number; match?: (request: SeenRequest) => boolean }): void;
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
  /** The next `count` requests get the server's answer `ms` late. */
  delayNext(count: number, ms: number): void;
  /** The next `count` requests have a body (of the answer, or of the request) cut short; see Fault. */
  truncateNext(count: number, side?: 'answer' | 'request'): void;
  /** The next `count` answers stall after part of their body; see Fault. */
  stallNext(count: number): void;
  /**
   * The next `count` requests that arrive on a kept-alive connection that already carried one are
   * met with a TCP reset before any answer (the request does not reach the server). Checked before
   * any other fault, which those requests leave queued.
   */
  resetReusedNext(count: number): void;
  /** Answers stalled now and not yet given up on by their client. */
  readonly stalled: number;
  /** Requests a fault was applied to so far (passes and reset connections included). */
  readonly faulted: number;
  /** Bytes of request bodies received so far (what clients sent towards the server). */
  readonly requestBytes: number;
  /** Bytes of the request bodies the server answered with a 2xx: what it acknowledged receiving. */
  readonly acceptedBytes: number;
  /** The next request for which `match` holds is answered with `answer`; the others pass. */
  failWhen(match: (request: SeenRequest) => boolean, answer: FaultAnswer): void;
  /** Forgets any faults still queued, and cuts the answers that stall. */
  reset(): void;
  close(): Promise<void>;
}

export interface SeenRequest {
  method: string;
  url: string;
  copySource: boolean;
  headers: http.IncomingHttpHeaders;
  /** Whether the proxy has sent the whole answer (the server's, or a fault's) to the client. */
  answered: boolean;
  /** The bytes of its body the server answered with a 2xx: 0 until then, and for any other answer. */
  acceptedBytes: number;
}

export async function startFaultProxy(target: string | URL): Promise<FaultProxy> {
  const upstream = new URL(target);
  // Idle sockets are let go before the upstream's own keep-alive timeout (Node's 5 s: s3rver, azurite),
  // as ferry's egress agents do (src/net/egress.ts, AGENT_OPTIONS): without a timeout the agent reuses
  // a socket the upstream is closing, and the proxy answered 502 for a request nobody faulted (seen
  // twice on 2026-11-27 in the S3 conformance, "a listing crosses page boundaries", under load).
  const agent = new http.Agent({ keepAlive: true, timeout: 4000 });
  const faults: Fault[] = [];
  const aimed: Array<{ match: (request: SeenRequest) => boolean; fault: Fault }> = [];
  /** Requests each client connection has carried so far. */
  const carried = new WeakMap<Socket, number>();
  const stalls = new Set<() => void>();
  let resets = 0;
  let requests = 0;
  let faulted = 0;
  let requestBytes = 0;
  let acceptedBytes = 0;
  const seen: SeenRequest[] = [];

  const server = http.createServer((req, res) => {
    requests++;
    const request: SeenRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      copySource: req.headers['x-amz-copy-source'] !== undefined,
      headers: req.headers,
      answered: false,
      acceptedBytes: 0,
    };
    seen.push(request);
    res.once('finish', () => {
      request.answered = true;
    });
    const socket = req.socket;
    const before = carried.get(socket) ?? 0;
    carried.set(socket, before + 1);
    if (before > 0 && resets > 0) {
      resets--;
      faulted++;
      socket.resetAndDestroy();
      return;
    }
    let bodyBytes = 0;
    req.on('data', (chunk: Buffer) => {
      requestBytes += chunk.length;
      bodyBytes += chunk.length;
    });
    const at = aimed.findIndex((a) => a.match(request));
    const fault = at >= 0 ? aimed.splice(at, 1)[0]?.fault : faults.shift();
    if (fault) faulted++;

    if (fault?.kind === 'fail') {
      answerWith(req, res, fault.answer);
      return;
    }
    if (fault?.kind === 'truncate' && fault.side === 'request') {
      truncateRequest(req, upstream);
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
        if (status >= 200 && status < 300) {
          acceptedBytes += bodyBytes;
          request.acceptedBytes = bodyBytes;
        }
        switch (fault?.kind) {
          case 'drop':
            drop(req, res, answer, fault.cutWhen);
            return;
          case 'cut-body':
            answer.destroy();
            res.writeHead(status, answer.headers);
            res.flushHeaders();
            // The headers go out, then the connection ends short of its body.
            req.socket.end();
            return;
          case 'headers':
            res.writeHead(status, { ...answer.headers, ...fault.headers });
            answer.pipe(res);
            return;
          case 'delay': {
            answer.pause();
            let held = true;
            const release = () => {
              if (!held) return;
              held = false;
              clearTimeout(timer);
              pass(res, answer);
            };
            const timer = setTimeout(release, fault.until ? 2 ** 31 - 1 : fault.ms);
            fault.until?.then(release);
            res.once('close', () => {
              held = false;
              clearTimeout(timer);
              answer.destroy();
            });
            return;
          }
          case 'truncate':
            if (fault.unframed) unframed(req, answer, 0.5);
            else truncateAnswer(req, res, answer);
            return;
          case 'unframed':
            unframed(req, answer, 1);
            return;
          case 'stall':
            stall(req, res, answer, stalls);
            return;
          case 'corrupt':
            res.writeHead(status, answer.rawHeaders);
            (fault.side === 'answer' ? answer.pipe(flipMiddleByte(answer)) : answer).pipe(res);
            return;
          default:
            pass(res, answer);
        }
      },
    );
    forward.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    if (fault?.kind === 'corrupt' && fault.side !== 'answer') req.pipe(flipMiddleByte(req)).pipe(forward);
    else req.pipe(forward);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  const proxy: FaultProxy = {
    url: `http://127.0.0.1:${port}`,
    port,
    get requests() {
      return requests;
    },
    seen,
    inject(fault, { count = 1, match } = {}) {
      for (let i = 0; i < count; i++) {
        if (match) aimed.push({ match, fault });
        else faults.push(fault);
      }
    },
    failNext(count, answer) {
      proxy.inject({ kind: 'fail', answer }, { count });
    },
    dropNext(count, cutWhen) {
      proxy.inject(cutWhen ? { kind: 'drop', cutWhen } : { kind: 'drop' }, { count });
    },
    cutBodyNext(count) {
      proxy.inject({ kind: 'cut-body' }, { count });
    },
    headersNext(count, headers) {
      proxy.inject({ kind: 'headers', headers }, { count });
    },
    passNext(count) {
      proxy.inject({ kind: 'pass' }, { count });
    },
    delayNext(count, ms) {
      proxy.inject({ kind: 'delay', ms }, { count });
    },
    truncateNext(count, side = 'answer') {
      proxy.inject({ kind: 'truncate', side }, { count });
    },
    stallNext(count) {
      proxy.inject({ kind: 'stall' }, { count });
    },
    resetReusedNext(count) {
      resets += count;
    },
    get stalled() {
      return stalls.size;
    },
    get faulted() {
      return faulted;
    },
    get requestBytes() {
      return requestBytes;
    },
    get acceptedBytes() {
      return acceptedBytes;
    },
    failWhen(match, answer) {
      proxy.inject({ kind: 'fail', answer }, { match });
    },
    reset() {
      faults.length = 0;
      aimed.length = 0;
      resets = 0;
      for (const release of [...stalls]) release();
    },
    async close() {
      proxy.reset();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
  return proxy;
}

/** The server's answer as it is. */
function pass(res: http.ServerResponse, answer: http.IncomingMessage): void {
  res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
  answer.pipe(res);
  answer.resume();
}

/** Answers with `answer` once the request's body has been read, as a real server would. */
function answerWith(req: http.IncomingMessage, res: http.ServerResponse, answer: FaultAnswer): void {
  req.resume();
  req.on('end', () => {
    const { status, headers = {}, body } = answer;
    const payload = req.method === 'HEAD' || body === undefined ? undefined : Buffer.from(body);
    res.writeHead(status, {
      ...headers,
      ...(payload ? { 'content-length': String(payload.length) } : { 'content-length': '0' }),
    });
    res.end(payload);
  });
}

function hasBody(req: http.IncomingMessage, answer: http.IncomingMessage): boolean {
  return req.method !== 'HEAD' && answer.headers['content-length'] !== '0';
}

/** The headers and part of the first chunk of the body, then (once `cutWhen` resolves) a cut. */
function drop(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  answer: http.IncomingMessage,
  cutWhen: Promise<void> | undefined,
): void {
  if (!hasBody(req, answer)) {
    answer.resume();
    req.socket.destroy();
    return;
  }
  res.writeHead(answer.statusCode ?? 502, answer.headers);
  answer.once('data', (chunk: Buffer) => {
    res.write(chunk.subarray(0, Math.max(1, Math.floor(chunk.length / 2))), () => {
      answer.pause();
      void (cutWhen ?? Promise.resolve()).then(() => {
        answer.destroy();
        req.socket.destroy();
      });
    });
  });
  answer.once('end', () => {
    if (!cutWhen) req.socket.destroy();
  });
}

/**
 * The answer's headers (its Content-Length kept) and the first half of its body, then the client's
 * connection ended cleanly. Without a Content-Length (chunked), half of the first chunk.
 */
function truncateAnswer(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  answer: http.IncomingMessage,
): void {
  if (!hasBody(req, answer)) {
    answer.resume();
    req.socket.end();
    return;
  }
  const length = Number(answer.headers['content-length']);
  let budget = Number.isSafeInteger(length) ? Math.floor(length / 2) : undefined;
  res.writeHead(answer.statusCode ?? 502, answer.headers);
  const finish = () => {
    answer.destroy();
    // The bytes written so far go out, then a FIN: an end that looks orderly, short of its length.
    res.socket?.end();
  };
  answer.on('data', (chunk: Buffer) => {
    budget ??= Math.floor(chunk.length / 2);
    const part = chunk.subarray(0, budget);
    budget -= part.length;
    if (part.length > 0) res.write(part);
    if (budget === 0) finish();
  });
  answer.once('end', finish);
}

/**
 * The answer's status and headers without Content-Length (nor Transfer-Encoding), saying the
 * connection closes, then the `share` of its body and a FIN: with less than all of it, a short body
 * that ends as a whole one would. Written to the socket as it is, since node's server would frame the
 * answer itself.
 */
function unframed(req: http.IncomingMessage, answer: http.IncomingMessage, share: number): void {
  const length = Number(answer.headers['content-length'] ?? 0);
  let budget = Math.floor(length * share);
  const lines = [`HTTP/1.1 ${answer.statusCode ?? 502} ${answer.statusMessage ?? ''}`];
  for (let i = 0; i < answer.rawHeaders.length; i += 2) {
    const name = answer.rawHeaders[i] ?? '';
    if (/^(content-length|transfer-encoding|connection|keep-alive)$/i.test(name)) continue;
    lines.push(`${name}: ${answer.rawHeaders[i + 1]}`);
  }
  lines.push('Connection: close');
  const socket = req.socket;
  socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  const finish = () => {
    answer.destroy();
    socket.end();
  };
  if (budget === 0 || req.method === 'HEAD') {
    finish();
    return;
  }
  answer.on('data', (chunk: Buffer) => {
    const part = chunk.subarray(0, budget);
    budget -= part.length;
    if (part.length > 0) socket.write(part);
    if (budget === 0) finish();
  });
  answer.once('end', finish);
}

/**
 * The request's head and the first half of its body go to the server on a connection of their own,
 * which is then ended cleanly; the client's connection is ended the same way, without an answer.
 */
function truncateRequest(req: http.IncomingMessage, upstream: URL): void {
  const length = Number(req.headers['content-length'] ?? 0);
  let budget = Number.isSafeInteger(length) ? Math.floor(length / 2) : 0;
  const conn = net.connect(Number(upstream.port), upstream.hostname);
  const lines = [`${req.method} ${req.url} HTTP/1.1`];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
  }
  conn.write(`${lines.join('\r\n')}\r\n\r\n`);
  const finish = () => {
    req.pause();
    conn.end();
    conn.resume();
    conn.once('close', () => req.socket.end());
  };
  if (budget === 0) {
    finish();
    return;
  }
  req.on('data', (chunk: Buffer) => {
    if (budget === 0) return;
    const part = chunk.subarray(0, budget);
    budget -= part.length;
    conn.write(part);
    if (budget === 0) finish();
  });
  conn.on('error', () => req.socket.destroy());
}

/**
 * The headers and half of the first chunk of the body, then nothing: the answer is held until the
 * client gives up (closes) or the proxy releases it (then its connection is cut).
 */
function stall(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  answer: http.IncomingMessage,
  stalls: Set<() => void>,
): void {
  if (!hasBody(req, answer)) {
    // Nothing to stall in: the headers are held instead.
    answer.resume();
  } else {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.once('data', (chunk: Buffer) => {
      answer.pause();
      res.write(chunk.subarray(0, Math.max(1, Math.floor(chunk.length / 2))));
    });
  }
  const release = () => {
    stalls.delete(release);
    answer.destroy();
    req.socket.destroy();
  };
  stalls.add(release);
  res.once('close', release);
}

/** A request's or an answer's body with its middle byte (by Content-Length; without one, its first) inverted. */
function flipMiddleByte(message: http.IncomingMessage): Transform {
  const length = Number(message.headers['content-length'] ?? 0);
  const at = Number.isSafeInteger(length) ? Math.floor(length / 2) : 0;
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (at >= seen && at < seen + chunk.length) {
        const copy = Buffer.from(chunk);
        copy[at - seen] = (copy[at - seen] ?? 0) ^ 0xff;
        chunk = copy;
      }
      seen += chunk.length;
      callback(null, chunk);
    },
  });
}
