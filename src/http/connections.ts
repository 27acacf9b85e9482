// The HTTP server's defences below the routes (docs/api.md, "HTTP connections and bodies"): how long
// headers, bodies and idle keep-alive connections may take, how many connections one client address,
// clients without a key (src/http/keyless-connections.ts) and all clients together may hold open, and
// the answer to a request Node's HTTP parser refuses itself (431, 414, 413, 408, 400), in the standard
// error shape. Routes never see any of this.
import type { Server, ServerOptions, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyBaseLogger } from 'fastify';
import { Counter, type Registry } from 'prom-client';
import type { HttpLimits } from '../config.js';
import { KeylessConnections } from './keyless-connections.js';

/**
 * Fastify's options for the server. Node's requestTimeout runs from a request's first byte until its
 * body is complete (not while the handler answers), so a body that trickles is cut off at headers +
 * body timeout. It is one deadline for the whole body, not an idle timeout: a route that streams large
 * uploads takes its request out of it (streamsItsBody) and applies its own rule.
 */
export function serverOptions(limits: HttpLimits): {
  requestTimeout: number;
  keepAliveTimeout: number;
  maxRequestsPerSocket: number;
  http: ServerOptions;
} {
  const requestTimeout = limits.headersTimeoutMs + limits.bodyTimeoutMs;
  return {
    requestTimeout,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    maxRequestsPerSocket: limits.maxRequestsPerConnection,
    http: {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout,
      maxHeaderSize: limits.maxHeaderBytes,
      // Node checks the two timeouts every 30 s by default, which let slow headers live ~90 s.
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
    },
  };
}

/**
 * The address a connection counts against: the IPv4 address, or the /64 of an IPv6 one (a single
 * client commonly holds a whole /64).
 */
export function addressKey(address: string | undefined): string {
  if (address === undefined) return '';
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (v4?.[1]) return v4[1];
  if (!address.includes(':')) return address;
  const [head = '', tail = ''] = address.split('%')[0]?.split('::') ?? [];
  const left = head === '' ? [] : head.split(':');
  const right = address.includes('::') ? (tail === '' ? [] : tail.split(':')) : [];
  const groups = [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

/** At most one warning line per reason a minute, however many connections are refused. */
const WARN_EVERY_MS = 60_000;

/** How each connection still counted as keyless leaves the count once a request on it has a valid key. */
const keyedBy = new WeakMap<Socket, () => void>();

/**
 * A request on this connection carried a valid API key (src/http/auth.ts): the connection no longer
 * counts against FERRY_HTTP_KEYLESS_CONNECTIONS.
 */
export function markKeyed(socket: Socket | null | undefined): void {
  if (!socket) return;
  keyedBy.get(socket)?.();
  keyedBy.delete(socket);
}

/**
 * Caps open connections: in all through server.maxConnections (Node drops the excess before any byte
 * is read), per client address by counting here and destroying the connection over the cap, and those
 * without a key by closing the oldest of the address that holds the most of them when a new one comes
 * past FERRY_HTTP_KEYLESS_CONNECTIONS (src/http/keyless-connections.ts).
 */
export function guardConnections(
  server: Server,
  limits: HttpLimits,
  deps: { registry: Registry; logger: FastifyBaseLogger },
): void {
  server.maxConnections = limits.maxConnections;
  const refused = new Counter({
    name: 'ferry_http_connections_refused_total',
    help: 'Connections closed at once because a connection cap was reached',
    labelNames: ['reason'] as const,
    registers: [deps.registry],
  });
  const lastWarned = new Map<string, number>();
  const warn = (reason: 'address' | 'total' | 'keyless', message: string) => {
    refused.inc({ reason });
    const now = Date.now();
    if (now - (lastWarned.get(reason) ?? 0) < WARN_EVERY_MS) return;
    lastWarned.set(reason, now);
    deps.logger.warn({ reason }, message);
  };
  server.on('drop', () =>
    warn('total', `connection refused: ${limits.maxConnections} open (FERRY_HTTP_MAX_CONNECTIONS)`),
  );
  const perAddress = limits.connectionsPerAddress;
  const open = new Map<string, number>();
  // At the total or above, Node's own cap comes first: the count would never close anything.
  const keyless =
    limits.keylessConnections < limits.maxConnections
      ? new KeylessConnections(limits.keylessConnections)
      : undefined;
  server.on('connection', (socket: Socket) => {
    const key = addressKey(socket.remoteAddress);
    if (perAddress > 0) {
      const count = (open.get(key) ?? 0) + 1;
      if (count > perAddress) {
        socket.destroy();
        warn(
          'address',
          `connection refused: ${perAddress} open from one address (FERRY_HTTP_CONNECTIONS_PER_ADDRESS)`,
        );
        return;
      }
      open.set(key, count);
      socket.once('close', () => {
        const left = (open.get(key) ?? 1) - 1;
        if (left === 0) open.delete(key);
        else open.set(key, left);
      });
    }
    if (keyless) {
      const evicted = keyless.add(socket, key);
      keyedBy.set(socket, () => keyless.remove(socket));
      socket.once('close', () => keyless.remove(socket));
      if (evicted) {
        evicted.destroy();
        warn(
          'keyless',
          `connection closed: ${keyless.limit} open without an API key (FERRY_HTTP_KEYLESS_CONNECTIONS); the oldest of the address holding the most made room`,
        );
      }
    }
  });
}

/**
 * The answers whose request body streams for as long as it keeps coming (PUT /v1/files/…: docs/api.md,
 * "Files through ferry"), so Node's whole-body deadline does not apply to them; their route cuts off a
 * body that stalls instead.
 */
const streamedBodies = new WeakSet<ServerResponse>();

/**
 * Takes this request out of the whole-body deadline. Node reports a request past the deadline once (it
 * drops it from the connections it watches as it does), through the clientError handler below, which
 * leaves a marked request alone.
 */
export function streamsItsBody(response: ServerResponse): void {
  streamedBodies.add(response);
}

/** How long a refused connection may still deliver what it was sending before it is closed. */
const LINGER_MS = 1000;

/** What Node passes to 'clientError' (Fastify types rawPacket as a Buffer's JSON form). */
type ClientError = Omit<ConnectionError, 'rawPacket'> & { code?: string; rawPacket?: unknown };

/**
 * Fastify's clientErrorHandler: the answer to a request Node's parser refused, or to one that ran out
 * of time, in the standard shape (docs/api.md, "Errors"). Node counts the request line with the
 * headers; an overflow where the request line is the larger part is 414, any other 431.
 */
export function clientErrorHandler(limits: HttpLimits) {
  return function onClientError(this: { log: FastifyBaseLogger }, err: ClientError, socket: Socket): void {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const current = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' && current !== undefined && streamedBodies.has(current))
      return;
    const [status, message] = describeClientError(err, limits);
    this.log.debug({ code: err.code, status }, 'client error');
    // Node's own rule: no answer once an answer to this request has begun.
    if (!socket.writable || current?.headersSent === true) {
      socket.destroy();
      return;
    }
    const body = JSON.stringify({ error: status, message });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    // Read and drop what is still coming for a moment, so the answer is not lost to a reset, then close.
    socket.resume();
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  };
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Payload Too Large',
  414: 'URI Too Long',
  431: 'Request Header Fields Too Large',
};

function describeClientError(err: ClientError, limits: HttpLimits): [number, string] {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [
        408,
        `the request did not arrive in time: headers within ${limits.headersTimeoutMs / 1000} s, the body within ${limits.bodyTimeoutMs / 1000} s more`,
      ];
    case 'HPE_HEADER_OVERFLOW':
      if (requestLineOverflows(err.rawPacket, limits.maxHeaderBytes)) {
        return [
          414,
          `the URL is too long: request line and headers take at most ${limits.maxHeaderBytes} bytes`,
        ];
      }
      return [431, `the request line and headers are larger than ${limits.maxHeaderBytes} bytes`];
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return [413, 'the chunk extensions are too large'];
    default:
      return [400, 'the request is not valid HTTP'];
  }
}

/**
 * The packet Node was parsing when the limit was passed starts a request whose request line takes more
 * than half the limit (or does not end in the packet): the URL is what is too long. A packet from the
 * middle of a request cannot tell, and answers 431.
 */
function requestLineOverflows(packet: unknown, maxHeaderBytes: number): boolean {
  if (!Buffer.isBuffer(packet) || !/^[A-Z]+ \S/.test(packet.subarray(0, 32).toString('latin1'))) return false;
  const end = packet.indexOf('\r\n');
  return end === -1 || end > maxHeaderBytes / 2;
}
