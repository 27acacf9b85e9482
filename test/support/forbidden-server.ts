// A server the egress guard must keep every store away from: it listens on 127.0.0.2 (loopback on
// Linux, outside the `127.0.0.1` allow entry the store tests give the guard) and counts the TCP
// connections that reach it, so a test can show that no byte of a refused redirect or session URL
// ever left ferry. It answers anything that does arrive with 200 and a body that would be mistaken
// for data, so a store that followed it would visibly succeed.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** The allow list that admits the provider fakes (on 127.0.0.1) but not a ForbiddenServer. */
export const FAKES_ONLY = ['127.0.0.1'] as const;

export class ForbiddenServer {
  /** TCP connections accepted so far. */
  connections = 0;
  readonly #server: http.Server;
  #origin = '';

  private constructor() {
    this.#server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"internal":"secret answer"}');
    });
    this.#server.on('connection', () => {
      this.connections += 1;
    });
  }

  static async start(): Promise<ForbiddenServer> {
    const server = new ForbiddenServer();
    await new Promise<void>((resolve, reject) => {
      server.#server.once('error', reject);
      server.#server.listen(0, '127.0.0.2', () => resolve());
    });
    server.#origin = `http://127.0.0.2:${(server.#server.address() as AddressInfo).port}`;
    return server;
  }

  /** http://127.0.0.2:PORT */
  get origin(): string {
    return this.#origin;
  }

  /** A URL on this server. */
  url(path = '/internal'): string {
    return `${this.#origin}${path}`;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
