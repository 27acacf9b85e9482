// One object of a verify that its listings could not decide (docs/api.md, "Verify"): both sides are
// stat'ed; sizes that differ decide it; in checksum mode a hash kind both report decides it; else the
// bytes are read and hashed: only the side that lacks a hash kind the other reports (computing that
// kind), or both (MD5) when neither reports one the hashing thread computes, and always both in download
// mode. Bytes stream through the hashing thread (src/stores/shared/hash-thread.ts) and are dropped, so
// an object of any size costs a chunk of memory per side. Nothing is written.
import type { Readable } from 'node:stream';
import { FerryError, isFerryError } from '../errors.js';
import type { Verdict, VerifyMode } from '../states.js';
import type { HashKind, ObjectInfo, Store } from '../stores/contract.js';
import { SentHashes } from '../stores/shared/proof.js';
import { checksumKind, checksumsAgree, comparedChecksums } from './verify.js';

export interface VerifyObjectArgs {
  source: Store;
  sourcePath: string;
  destination: Store;
  destinationPath: string;
  mode: VerifyMode;
  signal?: AbortSignal;
  /** Bytes read so far, both sides together. */
  onProgress?: (bytes: number) => void;
}

export interface VerifyOutcome {
  verdict: Verdict;
  /** How it was told (the report's reason). */
  reason: string;
  /** Bytes read, both sides together (0 when a stat told). */
  bytes: number;
  /** The object's size at the source (or at the destination, when the source has gone). */
  size: number;
  /** The checksums compared, `kind:value`, when a hash told it. */
  checksums?: { source: string; destination: string };
}

/** The hash computed over the bytes of a side that reports none of the other's kinds, when neither does. */
const READ_KIND: HashKind = 'md5';

async function statOrMissing(
  store: Store,
  path: string,
  signal?: AbortSignal,
): Promise<ObjectInfo | undefined> {
  try {
    return await store.stat(path, signal === undefined ? {} : { signal });
  } catch (err) {
    if (isFerryError(err, 'not_found')) return undefined;
    throw err;
  }
}

/**
 * The `kind` digest of an object's bytes, read to the end: more or fewer bytes than its stat said fails
 * as transient (it changed while read; a later attempt may find it settled).
 */
async function digestOf(
  store: Store,
  info: ObjectInfo,
  kind: HashKind,
  counted: (n: number) => void,
  signal?: AbortSignal,
): Promise<string> {
  const hashes = new SentHashes(store.provider, [kind]);
  let seen = 0;
  let body: Readable | undefined;
  try {
    body = await store.read(info.path, {
      ...(info.etag === undefined ? {} : { ifMatch: info.etag }),
      ...(signal === undefined ? {} : { signal }),
    });
    for await (const chunk of body) {
      const bytes: Buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      seen += bytes.length;
      if (seen > info.size) break;
      // Waited for, so the bytes queued for the hashing thread stay within a chunk or two.
      await hashes.update(bytes);
      counted(bytes.length);
    }
  } catch (err) {
    hashes.discard();
    throw err;
  } finally {
    body?.destroy();
  }
  if (seen !== info.size) {
    hashes.discard();
    throw new FerryError(
      'transient',
      `${store.provider}: ${info.path} gave ${seen > info.size ? 'more than' : seen} of the ${info.size} bytes its stat reported; it may have changed`,
    );
  }
  const digest = (await hashes.digests()).get(kind);
  if (digest === undefined) throw new FerryError('internal', `no ${kind} digest of ${info.path}`);
  return digest;
}

/** The first kind one side reports that the other does not, with the side that reports it. */
function reportedBy(
  a: ObjectInfo,
  b: ObjectInfo,
): { kind: HashKind; side: 'source' | 'destination'; value: string } | undefined {
  for (const [kind, value] of Object.entries(a.hashes) as [HashKind, string | undefined][]) {
    if (value !== undefined) return { kind, side: 'source', value };
  }
  for (const [kind, value] of Object.entries(b.hashes) as [HashKind, string | undefined][]) {
    if (value !== undefined) return { kind, side: 'destination', value };
  }
  return undefined;
}

function byChecksums(checksums: { source: string; destination: string }, how: string): VerifyOutcome {
  const kind = checksumKind(checksums.source);
  const same = checksumsAgree(checksums);
  return {
    verdict: same ? 'equal' : 'differ',
    reason: same ? `by checksum (${kind}, ${how})` : `the ${kind} differs (${how})`,
    bytes: 0,
    size: 0,
    checksums,
  };
}

export async function verifyObject(args: VerifyObjectArgs): Promise<VerifyOutcome> {
  const { source, destination, mode, signal } = args;
  const [from, to] = await Promise.all([
    statOrMissing(source, args.sourcePath, signal),
    statOrMissing(destination, args.destinationPath, signal),
  ]);
  // Gone since the listings: what is left decides.
  if (from === undefined) {
    return {
      verdict: 'missing_in_source',
      reason:
        to === undefined
          ? 'gone from both sides since they were listed'
          : 'gone from the source since it was listed',
      bytes: 0,
      size: to?.size ?? 0,
    };
  }
  if (to === undefined) {
    return {
      verdict: 'missing_in_destination',
      reason: 'gone from the destination since it was listed',
      bytes: 0,
      size: from.size,
    };
  }
  const size = from.size;
  if (from.size !== to.size) {
    return {
      verdict: 'differ',
      reason: `the sizes differ: ${from.size} bytes at the source, ${to.size} at the destination`,
      bytes: 0,
      size,
    };
  }
  if (mode === 'size') return { verdict: 'equal', reason: 'by size', bytes: 0, size };
  let bytes = 0;
  const counted = (n: number) => {
    bytes += n;
    args.onProgress?.(bytes);
  };
  if (mode === 'checksum') {
    const stated = comparedChecksums(from, to);
    if (stated !== undefined) return { ...byChecksums(stated, 'stat'), size };
    // One side reports a hash: the other's bytes are read and hashed in that kind.
    const known = reportedBy(from, to);
    if (known !== undefined) {
      const read =
        known.side === 'source'
          ? await digestOf(destination, to, known.kind, counted, signal)
          : await digestOf(source, from, known.kind, counted, signal);
      const theirs = `${known.kind}:${known.value}`;
      const ours = `${known.kind}:${read}`;
      const checksums =
        known.side === 'source'
          ? { source: theirs, destination: ours }
          : { source: ours, destination: theirs };
      return {
        ...byChecksums(checksums, `${known.side === 'source' ? 'the destination' : 'the source'} read`),
        bytes,
        size,
      };
    }
  }
  // Both sides read and hashed: download mode, or checksum mode where neither reports a hash.
  const [ours, theirs] = await Promise.all([
    digestOf(source, from, READ_KIND, counted, signal),
    digestOf(destination, to, READ_KIND, counted, signal),
  ]);
  return {
    ...byChecksums({ source: `${READ_KIND}:${ours}`, destination: `${READ_KIND}:${theirs}` }, 'both read'),
    bytes,
    size,
  };
}
