// Files between the user's machine and a location, through PUT and GET /v1/files/<location>/<path>
// (docs/api.md, "Files"): uploads by XMLHttpRequest, whose upload.onprogress is the only way a page
// learns how far a request body has gone, sending the File itself so the browser streams it from disk;
// downloads by fetch (a plain link cannot carry the Authorization header), counted as they arrive. Both
// wait their turn in one queue, a few at a time.
import { errorFrom, errorOf, storedKey, unreachable } from './api.js';

/** How many uploads and downloads run at once; the rest wait. */
export const AT_ONCE = 3;

/** `/v1/files/<location>/<path>` with the location and each segment URL-encoded. */
export function filesUrl(location: string, path: string): string {
  return `/v1/files/${encodeURIComponent(location)}/${path.split('/').map(encodeURIComponent).join('/')}`;
}

const auth = () => `Bearer ${storedKey() ?? ''}`;
type Progress = (loaded: number, total: number | undefined) => void;

/** PUT `file` at `path`; rejects with an ApiError in words, or an AbortError when `signal` aborts. */
export function putFile(
  location: string,
  path: string,
  file: File,
  progress: Progress,
  signal: AbortSignal,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', filesUrl(location, path));
    xhr.setRequestHeader('authorization', auth());
    xhr.setRequestHeader('content-type', file.type || 'application/octet-stream');
    xhr.upload.onprogress = (e) => progress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onload = () =>
      xhr.status >= 200 && xhr.status < 300
        ? resolve()
        : reject(
            errorFrom(xhr.status, xhr.statusText, xhr.responseText, xhr.getResponseHeader('retry-after')),
          );
    xhr.onerror = () => reject(unreachable('the upload was cut off'));
    xhr.onabort = () => reject(new DOMException('canceled', 'AbortError'));
    signal.addEventListener('abort', () => xhr.abort(), { once: true });
    progress(0, file.size);
    xhr.send(file);
  });
}

/**
 * GET the file at `path` and hand it to the browser's downloads as `name`. The bytes are gathered into
 * a Blob first (the browser keeps it, on disk when large, until it is saved: docs/console.md says what
 * that means for very large files), because only a same-origin object URL can be saved without the
 * key in the address.
 */
export async function getFile(
  location: string,
  path: string,
  name: string,
  progress: Progress,
  signal: AbortSignal,
): Promise<void> {
  let res: Response;
  try {
    res = await fetch(filesUrl(location, path), { headers: { authorization: auth() }, signal });
  } catch (err) {
    throw signal.aborted ? err : unreachable(err);
  }
  if (!res.ok || !res.body) throw await errorOf(res);
  const total = Number(res.headers.get('content-length')) || undefined;
  let loaded = 0;
  const counted = res.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, out) {
        loaded += chunk.byteLength;
        progress(loaded, total);
        out.enqueue(chunk);
      },
    }),
  );
  saveBlob(
    await new Response(counted, {
      headers: { 'content-type': res.headers.get('content-type') ?? 'application/octet-stream' },
    }).blob(),
    name,
  );
}

/** Hands `blob` to the browser's downloads as `name`, through a same-origin object URL. */
function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  // The download has taken its reference by then; the Blob is freed after.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/**
 * GET a job's report as CSV (docs/api.md, "Reports") and hand it to the browser's downloads as `name`,
 * as getFile does a file; rejects with an ApiError in words.
 */
export async function getReport(path: string, name: string): Promise<void> {
  let res: Response;
  try {
    res = await fetch(path, { headers: { authorization: auth(), accept: 'text/csv' } });
  } catch (err) {
    throw unreachable(err);
  }
  if (!res.ok) throw await errorOf(res);
  saveBlob(await res.blob(), name);
}

export interface Task {
  id: number;
  kind: 'upload' | 'download';
  name: string;
  /** Where it goes, as shown: the folder for an upload, the path for a download. */
  where: string;
  /** The folder an upload goes into, as `location/path` in the console's address. */
  folder?: string;
  loaded: number;
  total?: number | undefined;
  state: 'waiting' | 'running' | 'done' | 'failed' | 'canceled';
  error?: string;
  cancel(): void;
}

type Work = (progress: Progress, signal: AbortSignal) => Promise<void>;

/**
 * Uploads and downloads, AT_ONCE at a time, in the order given. Listeners hear of a task that starts
 * or ends at once, and of progress at most every 200 ms, so a fast transfer does not render the page
 * for every chunk; a task that ended well is passed to them.
 */
export class FileQueue {
  readonly tasks: Task[] = [];
  readonly #listeners = new Set<(ended?: Task) => void>();
  #next = 1;
  #running = 0;
  #waiting: Array<() => void> = [];
  #timer: ReturnType<typeof setTimeout> | undefined;

  /** Calls `listener` on every change until the function it returns is called. */
  listen(listener: (ended?: Task) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  add(kind: Task['kind'], name: string, where: string, work: Work, folder?: string): Task {
    const controller = new AbortController();
    const task: Task = {
      id: this.#next++,
      kind,
      name,
      where,
      ...(folder === undefined ? {} : { folder }),
      loaded: 0,
      state: 'waiting',
      cancel: () => controller.abort(),
    };
    this.tasks.unshift(task);
    const start = () => {
      this.#running++;
      task.state = 'running';
      this.#changed();
      work((loaded, total) => {
        task.loaded = loaded;
        task.total = total;
        this.#soon();
      }, controller.signal).then(
        () => this.#finish(task, 'done'),
        (err: unknown) =>
          this.#finish(
            task,
            controller.signal.aborted ? 'canceled' : 'failed',
            err instanceof Error ? err.message : String(err),
          ),
      );
    };
    // A task canceled while it waits ends at once.
    controller.signal.addEventListener('abort', () => {
      if (task.state !== 'waiting') return;
      this.#waiting = this.#waiting.filter((w) => w !== start);
      this.#finish(task, 'canceled');
    });
    if (this.#running < AT_ONCE) start();
    else this.#waiting.push(start);
    this.#changed();
    return task;
  }

  /** Forgets the tasks that have ended. */
  clear(): void {
    for (const t of this.tasks.filter((t) => t.state !== 'waiting' && t.state !== 'running'))
      this.tasks.splice(this.tasks.indexOf(t), 1);
    this.#changed();
  }

  #changed(ended?: Task): void {
    for (const listener of this.#listeners) listener(ended);
  }

  #finish(task: Task, state: 'done' | 'failed' | 'canceled', error?: string): void {
    if (task.state === 'running') this.#running--;
    task.state = state;
    if (error !== undefined && state === 'failed') task.error = error;
    this.#changed(state === 'done' ? task : undefined);
    if (this.#running < AT_ONCE) this.#waiting.shift()?.();
  }

  #soon(): void {
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.#changed();
    }, 200);
  }
}

/** The tab's one queue: uploads go on while the user looks at another folder or page. */
export const files = new FileQueue();
