// HTTP over a bare socket, for tests of what a client library would not send (broken URLs, trickled
// bodies, oversized headers) and of what the server does to the connection itself.
import net from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Parses the first answer in what a socket received; undefined until it has all arrived. */
export function parseAnswer(text: string): RawAnswer | undefined {
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  const body = Buffer.from(text.slice(end + 4), 'latin1');
  if (body.length < length) return undefined;
  return {
    status: Number(statusLine.split(' ')[1]),
    headers,
    body: body.subarray(0, length).toString('utf8'),
  };
}

/** A client connection that keeps what it received and says when the server closed it. */
export class RawConnection {
  readonly socket: net.Socket;
  received = '';
  /** Resolves when the connection is closed (by either side), with whether it was reset. */
  readonly closed: Promise<{ reset: boolean }>;
  readonly #connected: Promise<void>;
  #waiters: (() => void)[] = [];

  constructor(port: number, options: { localAddress?: string } = {}) {
    this.socket = net.connect({ port, host: '127.0.0.1', ...options });
    this.#connected = new Promise((resolve) => this.socket.once('connect', resolve));
    this.socket.on('data', (chunk: Buffer) => {
      this.received += chunk.toString('latin1');
      for (const wake of this.#waiters.splice(0)) wake();
    });
    let reset = false;
    this.socket.on('error', () => {
      reset = true;
    });
    this.closed = new Promise((resolve) =>
      this.socket.once('close', () => {
        for (const wake of this.#waiters.splice(0)) wake();
        resolve({ reset });
      }),
    );
  }

  connected(): Promise<void> {
    return this.#connected;
  }

  /** Writes unless the server has closed the connection (a trickle stops then). */
  write(text: string): boolean {
    if (this.socket.destroyed || !this.socket.writable) return false;
    this.socket.write(text);
    return true;
  }

  /**
   * The next complete answer after `skip` of them, or undefined if the connection closes first. Fails
   * after `timeoutMs`, so that a server that never answers fails the test instead of hanging it.
   */
  async answer(skip = 0, timeoutMs = 10_000): Promise<RawAnswer | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      let rest = this.received;
      let found: RawAnswer | undefined;
      for (let i = 0; i <= skip; i++) {
        found = parseAnswer(rest);
        if (!found) break;
        const consumed = rest.indexOf('\r\n\r\n') + 4 + Buffer.byteLength(found.body);
        rest = rest.slice(consumed);
      }
      if (found) return found;
      if (this.socket.destroyed) return undefined;
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`no answer within ${timeoutMs} ms; received: ${this.received.slice(0, 200)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

/** One request on a connection of its own (closed after the answer). */
export async function rawRequest(
  port: number,
  request: string,
  options: { localAddress?: string } = {},
): Promise<RawAnswer | undefined> {
  const connection = new RawConnection(port, options);
  try {
    connection.write(request);
    return await connection.answer();
  } finally {
    connection.close();
  }
}
