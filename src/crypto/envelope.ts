// Envelope encryption of stored secrets (location secrets, webhook signing secrets). Each secret is
// sealed with AES-256-GCM under a fresh data key; the data key is sealed with the master key; the record
// names the master key by its id, so that during a rotation a keyring holds the new key and the previous
// ones, and data keys are re-wrapped one record at a time (src/domain/master-key-rotation.ts). The row's
// id is bound as additional authenticated data: a sealed secret copied onto another row does not open.
//
// Record: "v1.<kid>.<wrapped data key>.<iv>.<ciphertext>.<tag>", base64url parts.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { FerryError } from '../errors.js';
import { Secret } from '../secret.js';

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface MasterKey {
  /** Short public identifier: the first 16 hex digits of SHA-256 of the key. */
  id: string;
  key: Secret<Buffer>;
}

export function masterKeyFrom(key: Buffer): MasterKey {
  if (key.length !== KEY_BYTES) throw new Error(`a master key must be ${KEY_BYTES} bytes, got ${key.length}`);
  const id = createHash('sha256').update(key).digest('hex').slice(0, 16);
  return { id, key: new Secret(key) };
}

function seal(key: Buffer, plaintext: Buffer, aad: Buffer): { iv: Buffer; ciphertext: Buffer; tag: Buffer } {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { iv, ciphertext, tag: cipher.getAuthTag() };
}

function open(key: Buffer, iv: Buffer, ciphertext: Buffer, tag: Buffer, aad: Buffer): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  decipher.setAAD(aad);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
}

const b64 = (b: Buffer) => b.toString('base64url');
const unb64 = (s: string) => Buffer.from(s, 'base64url');

interface Parts {
  kid: string;
  wrapped: string;
  iv: string;
  ciphertext: string;
  tag: string;
}

function parse(record: string): Parts {
  const parts = record.split('.');
  if (parts.length !== 6 || parts[0] !== 'v1') {
    throw new FerryError('internal', 'a stored secret has an unknown format');
  }
  const [, kid, wrapped, iv, ciphertext, tag] = parts as [string, string, string, string, string, string];
  return { kid, wrapped, iv, ciphertext, tag };
}

/** The data key sealed by a master key, bound to the record's context. */
function wrap(master: MasterKey, dataKey: Buffer, context: string): string {
  const w = seal(master.key.reveal(), dataKey, Buffer.from(`dk:${context}`, 'utf8'));
  return b64(Buffer.concat([w.iv, w.ciphertext, w.tag]));
}

function unwrap(master: MasterKey, wrapped: string, context: string): Buffer {
  const w = unb64(wrapped);
  return open(
    master.key.reveal(),
    w.subarray(0, IV_BYTES),
    w.subarray(IV_BYTES, w.length - TAG_BYTES),
    w.subarray(w.length - TAG_BYTES),
    Buffer.from(`dk:${context}`, 'utf8'),
  );
}

/** Master keys by id; the first one seals, any of them opens. */
export class Keyring {
  readonly #keys: Map<string, MasterKey>;
  readonly #current: MasterKey;

  constructor(keys: readonly MasterKey[]) {
    const [current] = keys;
    if (!current) throw new Error('a keyring needs at least one master key');
    this.#current = current;
    this.#keys = new Map(keys.map((k) => [k.id, k]));
  }

  get currentId(): string {
    return this.#current.id;
  }

  /** Whether a record sealed under master key `id` opens here. */
  has(id: string): boolean {
    return this.#keys.has(id);
  }

  seal(plaintext: string, context: string): string {
    const dataKey = randomBytes(KEY_BYTES);
    try {
      const aad = Buffer.from(context, 'utf8');
      const body = seal(dataKey, Buffer.from(plaintext, 'utf8'), aad);
      return [
        'v1',
        this.#current.id,
        wrap(this.#current, dataKey, context),
        b64(body.iv),
        b64(body.ciphertext),
        b64(body.tag),
      ].join('.');
    } finally {
      dataKey.fill(0);
    }
  }

  open(record: string, context: string): Secret<string> {
    const parts = parse(record);
    const master = this.#master(parts.kid);
    try {
      const dataKey = unwrap(master, parts.wrapped, context);
      try {
        const plain = open(
          dataKey,
          unb64(parts.iv),
          unb64(parts.ciphertext),
          unb64(parts.tag),
          Buffer.from(context, 'utf8'),
        );
        return new Secret(plain.toString('utf8'));
      } finally {
        dataKey.fill(0);
      }
    } catch (cause) {
      throw new FerryError('internal', 'a stored secret could not be decrypted', { cause });
    }
  }

  /**
   * The same record with its data key wrapped by the current master key (docs/security.md, "Rotating
   * the master key"). Only the data key is opened and sealed again: the secret itself is never
   * decrypted, and the body (iv, ciphertext, tag) is kept as it is. A record already under the current
   * key comes back unchanged.
   */
  rewrap(record: string, context: string): string {
    const parts = parse(record);
    if (parts.kid === this.#current.id) return record;
    const master = this.#master(parts.kid);
    let dataKey: Buffer;
    try {
      dataKey = unwrap(master, parts.wrapped, context);
    } catch (cause) {
      throw new FerryError('internal', 'a stored secret could not be decrypted', { cause });
    }
    try {
      return [
        'v1',
        this.#current.id,
        wrap(this.#current, dataKey, context),
        parts.iv,
        parts.ciphertext,
        parts.tag,
      ].join('.');
    } finally {
      dataKey.fill(0);
    }
  }

  #master(kid: string): MasterKey {
    const master = this.#keys.get(kid);
    if (!master) {
      throw new FerryError(
        'internal',
        `a stored secret was sealed with master key ${kid}, which this process does not have (check FERRY_MASTER_KEY and FERRY_MASTER_KEY_PREVIOUS)`,
      );
    }
    return master;
  }
}
