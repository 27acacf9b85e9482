// A webhook receiver on 127.0.0.1 for the webhook tests: it keeps every request (headers and body as
// received) and answers as the test says, one answer per request in order (the last repeats), where
// 'hang' never answers (a timeout for the sender) and 'trickle' answers 200 at once, then sends its
// body one byte every `trickleMs` and never ends it.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

export type Answer = number | 'hang' | 'trickle';

export class Receiver {
  readonly received: Received[] = [];
  /** TCP connections accepted, answered or not. */
  connections = 0;
  /** The pause between two bytes of a 'trickle' answer. */
  trickleMs = 1000;
  #answers: Answer[] = [204];
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();
  url = '';

  async start(path = '/hook'): Promise<this> {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        const answer = this.#answers.length > 1 ? this.#answers.shift() : this.#answers[0];
        if (answer === 'hang' || answer === undefined) return;
        if (answer === 'trickle') {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.flushHeaders();
          const timer = setInterval(() => res.write('.'), this.trickleMs);
          res.on('close', () => clearInterval(timer));
          return;
        }
        res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    this.#server.on('connection', (s: Socket) => {
      this.connections++;
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.#server?.listen(0, '127.0.0.1', resolve));
    const address = this.#server.address();
    if (typeof address !== 'object' || address === null) throw new Error('no address');
    this.url = `http://127.0.0.1:${address.port}${path}`;
    return this;
  }

  /** The answers to the next requests, in order; the last one repeats. */
  answer(...answers: Answer[]): void {
    this.#answers = answers;
  }

  /**
   * The request's type, data and webhook-id after checking its signature with the standardwebhooks
   * package (an implementation of the specification independent of ferry's); throws when it fails.
   */
  verify(
    received: Received,
    secret: string,
  ): { id: string; type: string; timestamp: string; data: Record<string, unknown> } {
    const payload = new Webhook(secret).verify(received.body, {
      'webhook-id': String(received.headers['webhook-id']),
      'webhook-timestamp': String(received.headers['webhook-timestamp']),
      'webhook-signature': String(received.headers['webhook-signature']),
    }) as { type: string; timestamp: string; data: Record<string, unknown> };
    return { id: String(received.headers['webhook-id']), ...payload };
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }
}
