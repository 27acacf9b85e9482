// Dropbox's content_hash ("Content hash", https://www.dropbox.com/developers/reference/content-hash):
// SHA-256 of each 4 MiB block, concatenated, hashed again with SHA-256, in lower-case hex. Computed
// incrementally, so the operations layer can verify a transfer without holding the object.
import { createHash, type Hash } from 'node:crypto';

const BLOCK = 4 * 1024 * 1024;

export class DropboxContentHasher {
  readonly #overall: Hash = createHash('sha256');
  #block: Hash = createHash('sha256');
  #inBlock = 0;

  update(data: Buffer): this {
    let at = 0;
    while (at < data.length) {
      const take = Math.min(BLOCK - this.#inBlock, data.length - at);
      this.#block.update(data.subarray(at, at + take));
      this.#inBlock += take;
      at += take;
      if (this.#inBlock === BLOCK) this.#flush();
    }
    return this;
  }

  digest(): string {
    if (this.#inBlock > 0) this.#flush();
    return this.#overall.digest('hex');
  }

  #flush(): void {
    this.#overall.update(this.#block.digest());
    this.#block = createHash('sha256');
    this.#inBlock = 0;
  }
}
