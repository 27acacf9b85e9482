// A client of GET /v1/events over fetch, as the console reads it: the events it has received so far,
// parsed (docs/api.md, "Live progress"), and whether the server ended the stream.
export interface StreamEvent {
  event: string;
  data: Record<string, unknown>;
}

export interface EventClient {
  status: number;
  headers: { get(name: string): string | null };
  /** The answer's text when it is not a stream (status other than 200): the error and its message. */
  body: string;
  events: StreamEvent[];
  /** Lines starting with ':' (the opening comment, heartbeats). */
  comments: string[];
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

import { Agent, fetch } from 'undici';

/** Each stream on a connection pool of its own, destroyed with it: no spare connection outlives it. */
export async function openEvents(base: string, token: string | null, query = ''): Promise<EventClient> {
  const controller = new AbortController();
  const dispatcher = new Agent();
  const res = await fetch(`${base}/v1/events${query}`, {
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
    signal: controller.signal,
    dispatcher,
  });
  const client: EventClient = {
    status: res.status,
    headers: res.headers,
    body: '',
    events: [],
    comments: [],
    ended: Promise.resolve(),
    close: () => {
      controller.abort();
      void dispatcher.destroy();
    },
  };
  if (res.status !== 200 || !res.body) {
    client.body = await res.text();
    await dispatcher.close();
    return client;
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  client.ended = (async () => {
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf('\n\n');
          let event = 'message';
          let data = '';
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) client.comments.push(line.slice(1).trim());
            else if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data += line.slice(6);
          }
          if (data) client.events.push({ event, data: JSON.parse(data) as Record<string, unknown> });
        }
      }
    } catch (err) {
      if (!controller.signal.aborted) throw err;
    }
  })();
  return client;
}
