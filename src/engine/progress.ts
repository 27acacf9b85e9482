// Progress written to the database at most once a second per piece of work, so that polling sees
// bytes move without a write per chunk.
import type { Clock } from '../clock.js';

const INTERVAL_MS = 1000;

export class ProgressWriter {
  #bytes = 0;
  #written = 0;
  #lastWrite = 0;
  #pending: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly write: (bytes: number) => Promise<void>,
  ) {
    this.#lastWrite = clock.now();
  }

  report(bytes: number): void {
    this.#bytes = bytes;
    const now = this.clock.now();
    if (this.#stopped || now - this.#lastWrite < INTERVAL_MS) return;
    this.#lastWrite = now;
    this.#pending = this.#pending.then(() => this.persist()).catch(() => {});
  }

  private async persist(): Promise<void> {
    if (this.#stopped || this.#bytes === this.#written) return;
    const bytes = this.#bytes;
    await this.write(bytes);
    this.#written = bytes;
  }

  async flush(): Promise<void> {
    await this.#pending;
    this.#stopped = true;
  }

  stop(): void {
    this.#stopped = true;
  }
}
