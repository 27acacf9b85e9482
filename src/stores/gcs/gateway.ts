// A loopback gateway that puts the egress guard under @google-cloud/storage when a location names its
// own endpoint (metadata `endpoint`). The library's JSON API transport (teeny-request over node-fetch)
// picks its own agents and offers no way to pass one in, so the store points the library at this
// gateway instead, and the gateway makes every upstream connection through the guard's agents (the
// check runs on each connection's resolved address; docs/api.md, "Metadata").
//
// - It listens on 127.0.0.1 at an ephemeral port, under a random path prefix: only the store that
//   started it knows the prefix, so no other local process can use it as a relay.
// - Requests and answers stream through untouched except Host, hop-by-hop headers, and Location
//   (a resumable upload's session URI on the endpoint is rewritten to come back through here).
// - A connection the guard refuses is answered 502 with a Google-shaped error body whose reason is
//   EGRESS_REFUSED_REASON, which errors.ts reads as `invalid`; other failed connections get 502.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { isFerryError } from '../../errors.js';
import type { Egress } from '../../net/egress.js';
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

export async function startGateway(endpoint: string, egress: Egress): Promise<Gateway> {
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
    const forward = upstream.request(`${targetBase}${path.slice(prefix.length)}`, {
      method: req.method,
      headers,
      agent,
    });
    forward.on('response', (answer) => {
      const out: http.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(answer.headers)) {
        if (HOP_BY_HOP.has(name) || value === undefined) continue;
        out[name] = name === 'location' && typeof value === 'string' ? relocate(value) : value;
      }
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, out);
      answer.pipe(res);
      answer.on('error', () => res.destroy());
    });
    forward.on('error', (err) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const refused = isFerryError(err);
      const message = refused ? err.message : `gateway: ${(err as { code?: string }).code ?? err.message}`;
      const body = JSON.stringify({
        error: {
          code: 502,
          message,
          errors: [{ domain: 'ferry', reason: refused ? EGRESS_REFUSED_REASON : 'gatewayFailure', message }],
        },
      });
      res.writeHead(502, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
    req.on('error', () => forward.destroy());
    res.on('close', () => {
      if (!res.writableFinished) forward.destroy();
    });
    req.pipe(forward);
  });

  /** A URL on the endpoint, as one through the gateway; anything else unchanged. */
  function relocate(location: string): string {
    return location.startsWith(`${targetBase}/`) ? `${base}${location.slice(targetBase.length)}` : location;
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
