// What a write proves (DECISIONS, "Every byte proven"; docs/api.md, "What a write proves"): the hashes
// its provider reports for what it stored, computed on the hashing thread over the bytes the store
// sent, and compared with the provider's answer. A proxy that changed a byte on the way, or a server
// that stored something else, fails the write as transient, so the operations layer retries it and
// never records it complete.
import { FerryError } from '../../errors.js';
import type { HashKind } from '../contract.js';
import { ThreadedHash } from './hash-thread.js';

export class SentHashes {
  readonly #provider: string;
  readonly #hashes: Map<HashKind, ThreadedHash>;
  #digests: Map<HashKind, string> | undefined;

  constructor(provider: string, kinds: readonly HashKind[]) {
    this.#provider = provider;
    this.#hashes = new Map(kinds.map((kind) => [kind, new ThreadedHash(kind)]));
  }

  /**
   * Adds the next bytes sent, in order. Shared memory (uploadParts' part buffers) is hashed in place:
   * wait for the promise before the buffer is refilled. Call it synchronously as the bytes go out.
   */
  update(data: Uint8Array): Promise<void> {
    return Promise.all([...this.#hashes.values()].map((hash) => hash.update(data))).then(() => undefined);
  }

  /**
   * Hashes a part while `send` sends it, and settles once both are done: a part buffer lent by
   * uploadParts may be refilled only then. Call it synchronously at the part's start, so parts are
   * hashed in order. A failure of the hashing thread is not this part's: digests() reports it.
   */
  async during<T>(data: Uint8Array, send: () => Promise<T>): Promise<T> {
    const hashed = this.update(data);
    try {
      return await send();
    } finally {
      await hashed.catch(() => undefined);
    }
  }

  /** The digests of everything sent, lower-case hex, by kind; the hashes cannot be fed afterwards. */
  async digests(): Promise<Map<HashKind, string>> {
    if (!this.#digests) {
      const entries = [...this.#hashes.entries()];
      const values = await Promise.all(entries.map(([, hash]) => hash.digest()));
      this.#digests = new Map(entries.map(([kind], i) => [kind, (values[i] as Buffer).toString('hex')]));
    }
    return this.#digests;
  }

  /**
   * Compares what was sent with what the provider says it stored (`reported`, lower-case hex as in
   * ObjectInfo.hashes) and answers the kinds compared: a kind the answer does not report proves
   * nothing and is left out. A mismatch throws transient, naming both hashes.
   */
  async check(path: string, reported: Partial<Record<HashKind, string>>): Promise<HashKind[]> {
    const sent = await this.digests();
    const proved: HashKind[] = [];
    for (const [kind, ours] of sent) {
      const theirs = reported[kind];
      if (theirs === undefined) continue;
      if (theirs.toLowerCase() !== ours) {
        throw new FerryError(
          'transient',
          `${this.#provider}: write ${path}: the stored object's ${kind} is ${theirs}, but the bytes sent hash to ${ours}: changed on the way`,
        );
      }
      proved.push(kind);
    }
    return proved;
  }

  /** Forgets the hashes (a write that failed before its check). */
  discard(): void {
    if (this.#digests) return;
    for (const hash of this.#hashes.values()) hash.discard();
  }
}
