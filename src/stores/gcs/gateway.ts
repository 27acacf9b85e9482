// A loopback gateway that puts the egress guard under @google-cloud/storage. The library's JSON API
// transport (teeny-request over node-fetch) picks its own agents, offers no way to pass one in, and
// follows redirects by itself, so the store points the library at this gateway instead (for Google's
// own endpoint too), and the gateway makes every upstream connection through the guard's agents (the
// check runs on each connection's resolved address; docs/api.md, "Metadata" and "Outbound calls").
//
// - It listens on 127.0.0.1 at an ephemeral port, under a random path prefix: only the store that
//   started it knows the prefix, so no other local process can use it as a relay.
// - Requests and answers stream through untouched except Host, hop-by-hop headers, and Location.
// - A Location on the endpoint (a resumable upload's session URI, a redirect that stays on the
//   endpoint) is rewritten to come back through here, so the library's next request is guarded too.
//   A Location anywhere else (a redirect, or a session URL, to another host) is never handed to the
//   library: the answer is replaced by a refusal, so neither the library nor the location's bearer
//   token ever reaches that host (docs/api.md, "Outbound calls").
// - A connection the guard refuses, and a refused Location, are answered 502 with a Google-shaped
//   error body whose reason is EGRESS_REFUSED_REASON, which errors.ts reads as `invalid`; other failed
//   connections get 502.
// - An upstream request whose connection stays silent for `idleMs` (FERRY_OUTBOUND_IDLE_SECONDS:
//   no answer, or a body that stops) is ended: answered 502 before its headers, cut after them. The
//   library sets no bound of its own, and never notices a body cut short (node-fetch), so every
//   answer but a download's (a small JSON document) is held until it is whole: one that is cut or
//   stalls is answered 502 instead. A download's cut is caught by the store's read guard (index.ts).
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { isFerryError } from '../../errors.js';
import type { Egress } from '../../net/egress.js';
import { seconds } from '../../net/time-bounds.js';
import { EGRESS_REFUSED_REASON } from './errors.js';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'te',
  'trailer',
  'upgrade',
  'host',
]);

export interface Gateway {
  /** The base URL to give the storage library as apiEndpoint: http://127.0.0.1:PORT/<prefix> */
  readonly url: string;
  close(): Promise<void>;
}

export async function startGateway(endpoint: string, egress: Egress, idleMs: number): Promise<Gateway> {
  const target = new URL(endpoint);
  const targetBase = `${target.origin}${target.pathname.replace(/\/+$/, '')}`;
  const prefix = `/${randomBytes(16).toString('hex')}`;
  const upstream = target.protocol === 'https:' ? https : http;
  const agent = target.protocol === 'https:' ? egress.httpsAgent : egress.httpAgent;
  let base = '';

  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    if (!path.startsWith(`${prefix}/`)) {
      req.resume();
      res.writeHead(404, { 'content-length': '0' });
      res.end();
      return;
    }
    const headers: http.OutgoingHttpHeaders = { host: target.host };
    for (const [name, value] of Object.entries(req.headers)) {
      if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = value;
    }
    const upstreamUrl = `${targetBase}${path.slice(prefix.length)}`;
    const forward = upstream.request(upstreamUrl, {
      method: req.method,
      headers,
      agent,
    });
    forward.setTimeout(idleMs, () =>
      forward.destroy(Object.assign(new Error(`no byte for ${seconds(idleMs)}`), { code: 'ETIMEDOUT' })),
    );
    forward.on('response', (answer) => {
      const status = answer.statusCode ?? 502;
      const out: http.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(answer.headers)) {
        if (HOP_BY_HOP.has(name) || value === undefined || name === 'location') continue;
        out[name] = value;
      }
      const location = answer.headers.location;
      if (location !== undefined) {
        const through = relocate(location, upstreamUrl);
        if (through === undefined) {
          answer.resume();
          refuse(res, offEndpoint(status, location, upstreamUrl), true);
          return;
        }
        out.location = through;
      }
      if (isMedia(upstreamUrl)) {
        res.writeHead(status, answer.statusMessage, out);
        answer.pipe(res);
        answer.on('error', () => res.destroy());
        return;
      }
      // Any other answer is a small JSON document, passed on whole, so that one cut or stalled after
      // its headers is answered 502 instead: the library never notices a body cut short.
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('error', () => {
        if (!res.headersSent) refuse(res, 'gateway: the answer was cut short', false);
      });
      answer.on('end', () => {
        const whole = Buffer.concat(chunks);
        delete out['transfer-encoding'];
        res.writeHead(status, answer.statusMessage, { ...out, 'content-length': whole.length });
        res.end(whole);
      });
    });
    forward.on('error', (err) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const refused = isFerryError(err);
      refuse(
        res,
        refused ? err.message : `gateway: ${(err as { code?: string }).code ?? err.message}`,
        refused,
      );
    });
    req.on('error', () => forward.destroy());
    res.on('close', () => {
      if (!res.writableFinished) forward.destroy();
    });
    req.pipe(forward);
  });

  /**
   * A Location on the endpoint (absolute, or relative to the request it answers), as a URL through
   * the gateway; undefined for one anywhere else, or one that is not a URL.
   */
  function relocate(location: string | string[], requested: string): string | undefined {
    const resolved = resolve(location, requested);
    if (resolved === undefined) return undefined;
    return resolved.startsWith(`${targetBase}/`) ? `${base}${resolved.slice(targetBase.length)}` : undefined;
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  // Idle keep-alive connections of the library must not keep the process alive.
  server.unref();
  const { port } = server.address() as AddressInfo;
  base = `http://127.0.0.1:${port}${prefix}`;
  return {
    url: base,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A download of an object's bytes (`alt=media`, or the XML-style download path): streamed, never held. */
function isMedia(url: string): boolean {
  const { pathname, searchParams } = new URL(url);
  return searchParams.get('alt') === 'media' || pathname.includes('/download/');
}

function resolve(location: string | string[], requested: string): string | undefined {
  if (typeof location !== 'string') return undefined;
  try {
    return new URL(location, requested).href;
  } catch {
    return undefined;
  }
}

/**
 * Why an answer's Location is refused. Only the origin is named: a session URL's path and query are
 * its credential.
 */
function offEndpoint(status: number, location: string | string[], requested: string): string {
  const resolved = resolve(location, requested);
  const where = resolved === undefined ? 'a location that is not a URL' : new URL(resolved).origin;
  const what = status >= 300 && status < 400 ? `a redirect to ${where}` : `a session URL on ${where}`;
  return (
    `the endpoint answered with ${what}; ferry follows no redirect or upload session off the ` +
    "location's endpoint"
  );
}

/** A Google-shaped 502: reason EGRESS_REFUSED_REASON (read as `invalid`) when `refused`. */
function refuse(res: http.ServerResponse, message: string, refused: boolean): void {
  const body = JSON.stringify({
    error: {
      code: 502,
      message,
      errors: [{ domain: 'ferry', reason: refused ? EGRESS_REFUSED_REASON : 'gatewayFailure', message }],
    },
  });
  res.writeHead(502, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
