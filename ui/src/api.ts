// The console's only way to ferry: the authenticated API (docs/api.md) with the key kept for this tab
// (sessionStorage), errors turned into readable messages, and the live-progress stream read over
// fetch, because EventSource cannot send the Authorization header (docs/api.md, "Live progress").
import { EventSourceParserStream } from 'eventsource-parser/stream';

const KEY = 'ferry.key';

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY);
}
export function storeKey(key: string | null): void {
  if (key === null) sessionStorage.removeItem(KEY);
  else sessionStorage.setItem(KEY, key);
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

let keyRefused: ((reason: string) => void) | undefined;

/**
 * Called with a sentence when ferry refuses the key (a 401, or the event stream ending because the key
 * was revoked or expired): the console then returns to sign-in with that reason (docs/console.md).
 */
export function onKeyRefused(handler: (reason: string) => void): void {
  keyRefused = handler;
}

const refusedSentence = (why: string) => `The API key was refused (${why}). Sign in again.`;

/** A readable sentence for an answer that is not 2xx. */
async function errorOf(res: Response): Promise<ApiError> {
  let message = `${res.status} ${res.statusText}`;
  try {
    const body = (await res.json()) as { message?: unknown; error?: unknown; candidates?: unknown[] };
    if (typeof body.message === 'string') message = body.message;
    else if (typeof body.error === 'string') message = body.error;
  } catch {
    // Not JSON: the status line says enough.
  }
  if (res.status === 401) {
    message = refusedSentence(message);
    keyRefused?.(message);
  }
  if (res.status === 429) message += ` Try again in ${res.headers.get('retry-after') ?? 'a few'} seconds.`;
  return new ApiError(res.status, message);
}

export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${storedKey() ?? ''}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch {
    throw new ApiError(0, 'ferry could not be reached. Is the server running?');
  }
  if (!res.ok) throw await errorOf(res);
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

export interface StreamEvent {
  event: 'job' | 'transfer' | 'send';
  data: Record<string, unknown>;
}

/**
 * Reads GET /v1/events until `signal` aborts, calling `onEvent` for each event; reconnects after a
 * pause when the stream ends or fails (the server restarted), and says so through `onState`.
 */
export async function followEvents(
  onEvent: (e: StreamEvent) => void,
  onState: (live: boolean) => void,
  signal: AbortSignal,
): Promise<void> {
  while (!signal.aborted) {
    try {
      const res = await fetch('/v1/events', {
        headers: { authorization: `Bearer ${storedKey() ?? ''}` },
        signal,
      });
      if (!res.ok || !res.body) throw await errorOf(res);
      onState(true);
      // The stream's framing (events, data lines, comments used as heartbeats) is read by
      // eventsource-parser; only the events ferry sends are looked at.
      const reader = res.body
        .pipeThrough(new TextDecoderStream())
        .pipeThrough(new EventSourceParserStream())
        .getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const { event, data } = value;
        if ((event === 'job' || event === 'transfer' || event === 'send') && data)
          onEvent({ event, data: JSON.parse(data) as Record<string, unknown> });
        // The key was revoked or expired while the stream was open (docs/api.md, "Live progress").
        if (event === 'end' && data) {
          const end = JSON.parse(data) as { error?: unknown; message?: unknown };
          if (end.error === 401) {
            keyRefused?.(refusedSentence(String(end.message)));
            return;
          }
        }
      }
    } catch {
      if (signal.aborted) return;
    }
    onState(false);
    await new Promise((resolve) => setTimeout(resolve, 3000));
  }
}
