// Spooling a body of unknown length to a temporary file, for providers whose chunked uploads must
// know the total size before the first part (Box upload sessions take file_size up front). Memory
// stays at one read buffer; the file is removed by release() whatever happens.
import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { PartReader } from './chunks.js';

export interface Spooled {
  size: number;
  /** A fresh stream of the spooled bytes. */
  open(): Readable;
  /** Deletes the temporary file. */
  release(): Promise<void>;
}

const BUFFER = 1024 * 1024;

/** Writes `head` and the rest of `reader` to a temporary file. */
export async function spool(head: Buffer, reader: PartReader, signal?: AbortSignal): Promise<Spooled> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-spool-'));
  const file = join(dir, 'body');
  const release = () => rm(dir, { recursive: true, force: true });
  let size = 0;
  try {
    const handle = await open(file, 'wx', 0o600);
    try {
      for (let chunk = head; chunk.length > 0; chunk = await reader.read(BUFFER)) {
        signal?.throwIfAborted();
        await handle.write(chunk);
        size += chunk.length;
      }
    } finally {
      await handle.close();
    }
    reader.assertComplete();
  } catch (err) {
    await release();
    throw err;
  }
  return { size, open: () => createReadStream(file, { highWaterMark: 256 * 1024 }), release };
}
