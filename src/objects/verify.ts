// What the object operations check after moving bytes (docs/api.md, "Copy": the size always, the
// checksum where both sides report the same kind of hash), and the byte counter that sits in every
// streamed copy: it reports progress and fails the stream when the source gives more or fewer bytes
// than its stat said, so a short read never becomes a short object.
import { Transform, type TransformCallback } from 'node:stream';
import { FerryError } from '../errors.js';
import type { HashKind, ObjectInfo, Store } from '../stores/contract.js';
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
export function comparedChecksums(source: ObjectInfo, written: ObjectInfo): ComparedChecksums | undefined {
  for (const [kind, expected] of Object.entries(source.hashes) as [HashKind, string | undefined][]) {
    const actual = written.hashes[kind];
    if (expected === undefined || actual === undefined) continue;
    return { source: `${kind}:${expected}`, destination: `${kind}:${actual}` };
  }
  return undefined;
}

/**
 * Passes bytes through, calling `onProgress` with the running total, and fails with
 * FerryError('transient') when the stream gives more or fewer than `expected` bytes: the source
 * changed or was cut short since it was stat'ed, and a later attempt may well succeed.
 */
export class ByteCounter extends Transform {
  bytes = 0;
  /** The counter's own verdict, when it failed the stream (as opposed to a failure passed through). */
  failure: FerryError | undefined;

  constructor(
    private readonly expected: number,
    private readonly what: string,
    private readonly onProgress?: (bytesDone: number) => void,
    /** Waited for before each chunk goes on (a bandwidth cap, src/objects/throttle.ts). */
    private readonly throttle?: Throttle,
    private readonly signal?: AbortSignal,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.expected) {
      callback(
        this.#fail(`the source gave more than the ${this.expected} bytes it reported; it may have changed`),
      );
      return;
    }
    if (this.throttle === undefined) {
      this.onProgress?.(this.bytes);
      callback(null, chunk);
      return;
    }
    const bytes = this.bytes;
    this.throttle(chunk.length, this.signal).then(
      () => {
        this.onProgress?.(bytes);
        callback(null, chunk);
      },
      (err: unknown) => callback(err instanceof Error ? err : new Error(String(err))),
    );
  }

  override _flush(callback: TransformCallback): void {
    if (this.bytes !== this.expected) {
      callback(this.#fail(`the source ended after ${this.bytes} of ${this.expected} bytes`));
      return;
    }
    callback();
  }

  #fail(reason: string): FerryError {
    this.failure ??= new FerryError('transient', `${this.what}: ${reason}`);
    return this.failure;
  }
}
