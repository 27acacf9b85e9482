// QuickXorHash, the hash OneDrive reports for every file (file.hashes.quickXorHash, base64).
// Algorithm: https://learn.microsoft.com/onedrive/developer/code-snippets/quickxorhash — a 160-bit
// register; byte i is XORed in at bit (11 * i) mod 160 (wrapping around the register), and at the end
// the total length (64-bit little-endian) is XORed into the last 8 of the 20 bytes.

const WIDTH_BITS = 160;
const SHIFT = 11;

export class QuickXorHash {
  readonly #state = new Uint8Array(WIDTH_BITS / 8);
  #length = 0n;
  #shift = 0;

  update(data: Uint8Array): this {
    const state = this.#state;
    for (const byte of data) {
      const index = this.#shift >> 3;
      const bit = this.#shift & 7;
      state[index] = (state[index] as number) ^ ((byte << bit) & 0xff);
      if (bit > 0) {
        const next = (index + 1) % state.length;
        state[next] = (state[next] as number) ^ (byte >> (8 - bit));
      }
      this.#shift = (this.#shift + SHIFT) % WIDTH_BITS;
    }
    this.#length += BigInt(data.length);
    return this;
  }

  digest(): Buffer {
    const out = Buffer.from(this.#state);
    const length = Buffer.alloc(8);
    length.writeBigUInt64LE(this.#length);
    for (let i = 0; i < 8; i++)
      out[out.length - 8 + i] = (out[out.length - 8 + i] as number) ^ (length[i] as number);
    return out;
  }
}

export function quickXorBase64(data: Uint8Array): string {
  return new QuickXorHash().update(data).digest().toString('base64');
}
