// A real SMTP server for the send tests (smtp-server from npm) on loopback: it keeps every message it
// accepts with its envelope and the message parsed by mailparser, and can be told to answer the next
// RCPT TO or DATA with an error code, as a mail server that is busy (4xx) or refuses (5xx) would.
import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface Received {
  /** When the message was accepted (epoch ms, system clock). */
  at: number;
  envelope: { from: string; to: string[] };
  raw: string;
  mail: ParsedMail;
}

type Stage = 'rcpt' | 'data';

function smtpError(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

export class TestSmtp {
  readonly received: Received[] = [];
  readonly #failures: Array<{ stage: Stage; code: number; message: string; address?: string }> = [];
  readonly #waiters = new Set<() => void>();
  #server: SMTPServer | undefined;
  url = '';

  /** The next RCPT TO (of `address`, or any) or DATA answers `code message`. */
  failNext(stage: Stage, code: number, message: string, address?: string): void {
    this.#failures.push({ stage, code, message, ...(address ? { address } : {}) });
  }

  #failure(stage: Stage, address?: string) {
    const index = this.#failures.findIndex(
      (f) => f.stage === stage && (f.address === undefined || f.address === address),
    );
    return index < 0 ? undefined : this.#failures.splice(index, 1)[0];
  }

  /**
   * The first message, received already or later, that `match` accepts (wait on the event, not a
   * sleep); rejects when `signal` aborts (pass the test's, so that a test that times out cleans up).
   */
  message(match: (received: Received) => boolean, signal?: AbortSignal): Promise<Received> {
    const found = this.received.find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const check = () => {
        const got = this.received.find(match);
        if (!got) return;
        this.#waiters.delete(check);
        signal?.removeEventListener('abort', abort);
        resolve(got);
      };
      const abort = () => {
        this.#waiters.delete(check);
        reject(signal?.reason ?? new Error('aborted'));
      };
      this.#waiters.add(check);
      signal?.addEventListener('abort', abort, { once: true });
    });
  }

  async start(): Promise<this> {
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onRcptTo: (address, _session, callback) => {
        const failure = this.#failure('rcpt', address.address);
        callback(failure ? smtpError(failure.code, failure.message) : undefined);
      },
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const failure = this.#failure('data');
          if (failure) return callback(smtpError(failure.code, failure.message));
          const raw = Buffer.concat(chunks).toString('utf8');
          simpleParser(raw)
            .then((mail) => {
              this.received.push({
                at: Date.now(),
                envelope: {
                  from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
                  to: session.envelope.rcptTo.map((r) => r.address),
                },
                raw,
                mail,
              });
              for (const notify of this.#waiters) notify();
              callback();
            })
            .catch((err: Error) => callback(err));
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.#server = server;
    this.url = `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }
}
