// Moving one file between this computer and a location through ferry (docs/api.md, "Files through
// ferry"): an upload streams the file as the body of PUT /v1/files/…, a download streams the answer of
// GET /v1/files/… to disk. Neither holds more than a stream's buffer of the file in memory.
//
// A download is written to `<name>.ferry-partial`, with what identifies the remote file (its ETag or
// Last-Modified, and its size) in `<name>.ferry-partial.json` beside it, and renamed into place only
// once the size matches. A later run finds the partial file and asks for the rest (`Range: bytes=N-`
// with `If-Range`), so a file that changed in between comes whole from byte 0 rather than as a splice of
// two versions; a 206 whose range or identity does not match what was saved is refused the same way.
import { createReadStream, type ReadStream } from 'node:fs';
import { mkdir, open, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { contentTypeOf } from '../content-type.js';
import { CliError, EXIT } from '../exit.js';
import type { Api } from '../http.js';
import { type Download, expandHome, filesPath, localError, type Upload } from './plan.js';

export const PARTIAL = '.ferry-partial';

/** What a file is counted into as its bytes pass. */
export interface Counter {
  add(bytes: number): void;
  drop(bytes: number): void;
}

function counting(counter: Counter): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      counter.add(chunk.length);
      done(null, chunk);
    },
  });
}

/** Stores one local file at its key; checks that the server kept as many bytes as were sent. */
export async function upload(api: Api, task: Upload, counter: Counter): Promise<void> {
  const path = resolve(expandHome(task.local));
  // Opened first, so that a missing or unreadable file is its own error before any request.
  try {
    await (await open(path, 'r')).close();
  } catch (err) {
    throw localError(err, task.local);
  }
  // Bytes of this file counted so far: dropped again when a try ends without the file stored.
  let sent = 0;
  let stream: ReadStream | undefined;
  let pass: Transform | undefined;
  /** The file from its first byte, counted as it is read: made again for each try (a 429 waited out). */
  const body = () => {
    counter.drop(sent);
    sent = 0;
    stream?.destroy();
    pass?.destroy();
    const read = createReadStream(path);
    const counted = counting({
      add(bytes) {
        sent += bytes;
        counter.add(bytes);
      },
      drop: counter.drop,
    });
    read.once('error', (err) => counted.destroy(localError(err, task.local)));
    stream = read;
    pass = counted;
    return Readable.toWeb(read.pipe(counted)) as unknown as globalThis.ReadableStream<Uint8Array>;
  };
  try {
    const res = await api.raw('PUT', filesPath(task.location, task.key), {
      headers: {
        // The type by the name (a PDF is stored as application/pdf), as a browser's upload does.
        'content-type': contentTypeOf(task.key),
        'content-length': String(task.size),
      },
      body,
    });
    const entry = (await res.json().catch(() => undefined)) as { size?: number } | undefined;
    if (typeof entry?.size === 'number' && entry.size !== task.size)
      throw new CliError(
        `${task.local}: the server stored ${entry.size} bytes of ${task.size}; it changed while it was read, or the store cut it short`,
        EXIT.failure,
      );
  } catch (err) {
    counter.drop(sent);
    throw err;
  } finally {
    // The server may answer (an error) before reading the whole body: stop reading before closing.
    stream?.destroy();
    pass?.destroy();
  }
}

interface Saved {
  /** ETag, else Last-Modified: what If-Range sends. */
  validator: string;
  size: number;
}

async function readSaved(meta: string): Promise<Saved | undefined> {
  try {
    const saved = JSON.parse(await readFile(meta, 'utf8')) as Partial<Saved>;
    if (typeof saved.validator === 'string' && typeof saved.size === 'number') return saved as Saved;
  } catch {}
  return undefined;
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}

/** The whole file's size from a 200's Content-Length or a 206's Content-Range (`bytes a-b/total`). */
function totalOf(res: Response): number {
  const range = res.headers.get('content-range');
  const fromRange = range ? /\/(\d+)$/.exec(range)?.[1] : undefined;
  if (fromRange !== undefined) return Number(fromRange);
  const length = res.headers.get('content-length');
  return res.status === 200 && length !== null ? Number(length) : -1;
}

export interface Downloaded {
  /** The byte the download continued from (0 when it started afresh). */
  resumedAt: number;
}

/** Fetches one file to its local path, continuing a partial download left by an earlier run. */
export async function download(api: Api, task: Download, counter: Counter): Promise<Downloaded> {
  const target = resolve(expandHome(task.local));
  const partial = `${target}${PARTIAL}`;
  const meta = `${partial}.json`;
  try {
    await mkdir(dirname(target), { recursive: true });
  } catch (err) {
    throw localError(err, dirname(task.local));
  }
  const path = filesPath(task.location, task.key);
  const saved = await readSaved(meta);
  let offset = saved ? await sizeOf(partial) : 0;
  let res: Response | undefined;
  if (saved && offset > 0) {
    res = await api.raw('GET', path, {
      headers: { range: `bytes=${offset}-`, 'if-range': saved.validator },
      pass: [416],
    });
    const range = /^bytes (\d+)-\d+\/(\d+)$/.exec(res.headers.get('content-range') ?? '');
    const etag = res.headers.get('etag');
    const same =
      res.status === 206 &&
      Number(range?.[1]) === offset &&
      Number(range?.[2]) === saved.size &&
      (etag === null || !saved.validator.includes('"') || etag === saved.validator);
    // 416: nothing left to send, so the partial file is whole if it has the saved size (an earlier
    // run stopped between the last byte and the rename); otherwise it is asked for again from byte 0.
    if (res.status === 416 && offset === saved.size) {
      await res.body?.cancel();
      res = undefined;
      counter.add(offset);
    } else if (res.status !== 200 && !same) {
      await res.body?.cancel();
      res = await api.raw('GET', path);
      offset = 0;
    } else if (res.status === 200) offset = 0;
  } else {
    res = await api.raw('GET', path);
  }
  let total = saved?.size ?? -1;
  if (res) {
    if (res.status === 200) {
      total = totalOf(res);
      const validator = res.headers.get('etag') ?? res.headers.get('last-modified');
      if (validator) await writeFile(meta, JSON.stringify({ validator, size: total } satisfies Saved));
      else await unlink(meta).catch(() => {});
    }
    counter.add(offset);
    let got = 0;
    let out: Awaited<ReturnType<typeof open>>;
    try {
      out = await open(partial, offset > 0 ? 'a' : 'w');
    } catch (err) {
      await res.body?.cancel();
      throw localError(err, task.local);
    }
    try {
      // Each chunk is on disk before the next is read: a cut connection leaves every byte that
      // arrived in the partial file, for the next run to continue from; memory holds one chunk.
      const body = (res.body ?? []) as AsyncIterable<Uint8Array>;
      for await (const chunk of body) {
        try {
          await out.write(chunk);
        } catch (err) {
          throw Object.assign(localError(err, task.local), { local: true });
        }
        got += chunk.length;
        counter.add(chunk.length);
      }
    } catch (err) {
      counter.drop(offset + got);
      if ((err as { local?: boolean }).local) throw err;
      throw new CliError(
        `${task.location}:${task.key}: the download stopped after ${offset + got} bytes (${(err as Error).message}); run the same command again to continue from there`,
        EXIT.failure,
      );
    } finally {
      await out.close();
    }
  }
  const have = await sizeOf(partial);
  if (total >= 0 && have !== total)
    throw new CliError(
      `${task.location}:${task.key}: the download ended after ${have} of ${total} bytes; run the same command again to continue from there`,
      EXIT.failure,
    );
  try {
    await rename(partial, target);
  } catch (err) {
    throw localError(err, task.local);
  }
  await unlink(meta).catch(() => {});
  return { resumedAt: offset };
}
