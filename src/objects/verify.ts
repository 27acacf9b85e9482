// What the object operations check after moving bytes (docs/api.md, "Copy" and "Verification": the
// size always, the checksum where both sides report the same kind of hash, and what the destination's
// write proved), and the byte counter that sits in every streamed copy: it reports progress, fails
// the stream when the source gives more or fewer bytes than its stat said, so a short read never
// becomes a short object, and checks the source's own hashes against the bytes read.
import { Transform, type TransformCallback } from 'node:stream';
import { FerryError } from '../errors.js';
import type { HashKind, ObjectInfo, Store } from '../stores/contract.js';
import { ThreadedHash, type ThreadHashAlgorithm } from '../stores/shared/hash-thread.js';
import type { Throttle } from './throttle.js';

/**
 * True when `destination` can copy or move server-side from `source`: the same provider and the same
 * account (contract glossary: the account names the credentials and endpoint behind a store).
 */
export function sameAccount(source: Store, destination: Store): boolean {
  return source.provider === destination.provider && source.account === destination.account;
}

/** True when the two paths name one object (same account, same path). */
export function sameObject(
  source: Store,
  sourcePath: string,
  destination: Store,
  destinationPath: string,
): boolean {
  return sameAccount(source, destination) && sourcePath === destinationPath;
}

/**
 * Why `written` is not a faithful copy of `source`, or undefined when it is: the sizes must be equal,
 * and every hash kind both report must agree. A kind only one side reports proves nothing either way.
 */
export function copyMismatch(source: ObjectInfo, written: ObjectInfo): string | undefined {
  if (written.size !== source.size) {
    return `the destination holds ${written.size} bytes, the source ${source.size}`;
  }
  for (const [kind, expected] of Object.entries(source.hashes) as [HashKind, string | undefined][]) {
    const actual = written.hashes[kind];
    if (expected === undefined || actual === undefined) continue;
    if (expected.toLowerCase() !== actual.toLowerCase()) {
      return `the ${kind} of the destination (${actual}) differs from the source's (${expected})`;
    }
  }
  return undefined;
}

/** The checksums a verified copy compared (docs/api.md, "Reports"), each as `kind:value`. */
export interface ComparedChecksums {
  source: string;
  destination: string;
}

/**
 * What copyMismatch compared beyond the size, for a copy it passed: the first hash kind both sides
 * report (in the source's order), or undefined when none is (then only the size was compared).
 */
export function comparedChecksums(
  source: Pick<ObjectInfo, 'hashes'>,
  written: Pick<ObjectInfo, 'hashes'>,
): ComparedChecksums | undefined {
  for (const [kind, expected] of Object.entries(source.hashes) as [HashKind, string | undefined][]) {
    const actual = written.hashes[kind];
    if (expected === undefined || actual === undefined) continue;
    return { source: `${kind}:${expected}`, destination: `${kind}:${actual}` };
  }
  return undefined;
}

/** The kind of a `kind:value` checksum. */
export function checksumKind(checksum: string): string {
  return checksum.slice(0, checksum.indexOf(':'));
}

/** Whether two `kind:value` checksums of one kind agree (hex, in any case). */
export function checksumsAgree(checksums: ComparedChecksums): boolean {
  return checksums.source.toLowerCase() === checksums.destination.toLowerCase();
}

/**
 * How a copy was proven (docs/api.md, "Verification"): the hash kinds that showed the destination
 * holds the bytes, by what its write compared with the provider (ObjectInfo.verified) or by a hash
 * both sides report and agree on; none: by its size alone.
 */
export function provenBy(source: ObjectInfo, written: ObjectInfo): HashKind[] {
  const kinds = new Set<HashKind>(written.verified ?? []);
  const compared = comparedChecksums(source, written);
  if (compared !== undefined) kinds.add(compared.source.slice(0, compared.source.indexOf(':')) as HashKind);
  return [...kinds].sort();
}

/** The source's hash kinds a streamed copy computes over the bytes it reads: those the hashing thread has. */
const READ_CHECKED: readonly ThreadHashAlgorithm[] = ['md5', 'sha1'];

/**
 * Passes bytes through, calling `onProgress` with the running total, and fails with
 * FerryError('transient') when the stream gives more or fewer than `expected` bytes: the source
 * changed or was cut short since it was stat'ed, and a later attempt may well succeed. Given the
 * source's hashes (of the whole object: the counter must see every byte), it computes those of the
 * kinds the hashing thread has over the bytes that pass, and fails the stream before its end when one
 * differs: bytes damaged on their way from the source are never written as complete.
 */
export class ByteCounter extends Transform {
  bytes = 0;
  /** The counter's own verdict, when it failed the stream (as opposed to a failure passed through). */
  failure: FerryError | undefined;
  readonly #hashes: Array<{ kind: ThreadHashAlgorithm; expected: string; hash: ThreadedHash }> = [];
  /**
   * The hashes the counter checks the bytes against before the stream ends (WriteOptions.bodyHashes):
   * a stream that ended without an error had them.
   */
  readonly checks: Partial<Record<HashKind, string>> = {};

  constructor(
    private readonly expected: number,
    private readonly what: string,
    private readonly onProgress?: (bytesDone: number) => void,
    /** Waited for before each chunk goes on (a bandwidth cap, src/objects/throttle.ts). */
    private readonly throttle?: Throttle,
    private readonly signal?: AbortSignal,
    sourceHashes: ObjectInfo['hashes'] = {},
  ) {
    super();
    for (const kind of READ_CHECKED) {
      const value = sourceHashes[kind];
      if (value !== undefined) {
        this.#hashes.push({ kind, expected: value.toLowerCase(), hash: new ThreadedHash(kind) });
        this.checks[kind] = value.toLowerCase();
      }
    }
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.expected) {
      callback(
        this.#fail(`the source gave more than the ${this.expected} bytes it reported; it may have changed`),
      );
      return;
    }
    const bytes = this.bytes;
    const pass = () => {
      this.onProgress?.(bytes);
      callback(null, chunk);
    };
    const failed = (err: unknown) => callback(err instanceof Error ? err : new Error(String(err)));
    // The chunk goes on once the hashes have it: while the hashing thread is behind, the copy waits
    // for it (hash-thread.ts, HASH_BYTES_IN_FLIGHT) rather than queueing copies of every chunk.
    const hashed =
      this.#hashes.length === 0
        ? undefined
        : this.#hashes.length === 1
          ? this.#hashes[0]?.hash.update(chunk)
          : Promise.all(this.#hashes.map(({ hash }) => hash.update(chunk)));
    const throttled = () =>
      this.throttle === undefined ? pass() : this.throttle(chunk.length, this.signal).then(pass, failed);
    if (hashed === undefined) throttled();
    else hashed.then(throttled, failed);
  }

  override _flush(callback: TransformCallback): void {
    if (this.bytes !== this.expected) {
      callback(this.#fail(`the source ended after ${this.bytes} of ${this.expected} bytes`));
      return;
    }
    if (this.#hashes.length === 0) {
      callback();
      return;
    }
    const hashes = this.#hashes.splice(0);
    Promise.all(hashes.map(async (h) => ({ ...h, actual: (await h.hash.digest()).toString('hex') }))).then(
      (results) => {
        const wrong = results.find((r) => r.actual !== r.expected);
        if (wrong !== undefined) {
          callback(
            this.#fail(
              `the bytes read have the ${wrong.kind} ${wrong.actual}, not the source's ${wrong.expected}; they changed or were damaged on the way`,
            ),
          );
          return;
        }
        callback();
      },
      (err: unknown) => callback(err instanceof Error ? err : new Error(String(err))),
    );
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    // A stream that ends early leaves no hash behind on the thread.
    for (const { hash } of this.#hashes.splice(0)) hash.discard();
    callback(err);
  }

  #fail(reason: string): FerryError {
    this.failure ??= new FerryError('transient', `${this.what}: ${reason}`);
    return this.failure;
  }
}
