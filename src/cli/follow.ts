// Waiting on a job or a transfer (docs/cli.md, "jobs, transfers"): each state it passes through until
// it has finished, as GET /v1/jobs/{id} or /v1/transfers/{id} answers it. The states come from the
// server's event stream (docs/api.md, "Live progress"), opened before the first GET so that no change
// after that answer goes unheard; each heartbeat of the stream (every 15 s) asks the GET once more, as
// the server's own readers do, should a wake-up have been lost. The stream can be refused (429: the
// workspace has as many open as one process allows; 503: the server is stopping) or end before the
// work has (a restart): from then on the state is asked for every `intervalMs`, so a watch never
// depends on a free stream.
import { createParser } from 'eventsource-parser';
import type { Job, Transfer } from '../api/routes.js';
import { hasFinished } from '../states.js';
import { CliError, EXIT } from './exit.js';
import type { Api } from './http.js';

/** What is followed, and its state as GET /v1/jobs/{id} or /v1/transfers/{id} and the stream show it. */
interface States {
  job: Job;
  transfer: Transfer;
}
export type Followed = keyof States;

/** The states of the job or transfer `id`, the first as it is now, the last the one it ended in. */
export async function* follow<K extends Followed>(
  api: Api,
  kind: K,
  id: string,
  intervalMs: number,
): AsyncGenerator<States[K], void, undefined> {
  type T = States[K];
  // tsc cannot narrow K by kind: each branch answers the state of its own kind.
  const get = () =>
    (kind === 'job' ? api.get('/v1/jobs/{id}', { id }) : api.get('/v1/transfers/{id}', { id })) as Promise<T>;
  const controller = new AbortController();
  let stream = await openStream<T>(api, kind, id, controller.signal);
  try {
    let state = await get();
    for (;;) {
      yield state;
      if (hasFinished(kind, state.status)) return;
      const heard = await stream?.next();
      if (heard !== undefined && heard.done !== true && heard.value !== 'heartbeat') {
        state = heard.value.state;
        continue;
      }
      if (heard?.done === true) stream = undefined;
      if (stream === undefined) await new Promise((resolve) => setTimeout(resolve, intervalMs));
      state = await get();
    }
  } finally {
    await stream?.return(undefined);
    controller.abort();
  }
}

/** The state `follow` ends with: the one the job or transfer finished in. */
export async function ended<T>(states: AsyncIterable<T>): Promise<T> {
  let last: T | undefined;
  for await (const state of states) last = state;
  // follow answers one state at least, or throws.
  if (last === undefined) throw new CliError('the server answered no state', EXIT.failure);
  return last;
}

/** What the stream says of the one job or transfer: a new state of it, or a heartbeat. */
type Heard<T> = { state: T } | 'heartbeat';

/** The stream, or undefined when the server refuses one now. */
async function openStream<T>(
  api: Api,
  kind: Followed,
  id: string,
  signal: AbortSignal,
): Promise<AsyncGenerator<Heard<T>> | undefined> {
  const res = await api.raw('GET', '/v1/events', {
    headers: { accept: 'text/event-stream' },
    pass: [429, 503],
    signal,
  });
  if (!res.ok || res.body === null) {
    await res.body?.cancel();
    return undefined;
  }
  return heardOf<T>(res.body, kind, id);
}

/** What the stream says of the job or transfer `id`, until the stream ends or fails. */
async function* heardOf<T>(
  body: ReadableStream<Uint8Array>,
  kind: Followed,
  id: string,
): AsyncGenerator<Heard<T>> {
  const heard: Heard<T>[] = [];
  const parser = createParser({
    onEvent(e) {
      if (e.event !== kind) return;
      const data = JSON.parse(e.data) as T & { id?: string; job_id?: string };
      if ((kind === 'job' ? data.job_id : data.id) === id) heard.push({ state: data });
    },
    onComment(comment) {
      if (comment.trim() === 'heartbeat') heard.push('heartbeat');
    },
  });
  const decoder = new TextDecoder();
  try {
    for await (const chunk of body) {
      parser.feed(decoder.decode(chunk, { stream: true }));
      yield* heard.splice(0);
    }
  } catch {
    // The stream failed (the server went away): it has ended, and the next GET says why.
  }
}
