// The CLI's one way of waiting on a job or a transfer (src/cli/follow.ts): it hears each state from the
// event stream rather than asking again and again, and asks on a heartbeat, when the stream is refused
// or when it ends before the work has. A server of fetch answers here: no socket.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ended, follow } from '../../src/cli/follow.js';
import { createApi } from '../../src/cli/http.js';
import { ApiKey, type Settings } from '../../src/cli/settings.js';

const settings: Settings = {
  url: 'http://ferry.test',
  urlSource: 'default',
  key: new ApiKey('k'),
  keySource: 'FERRY_API_KEY',
};

interface Job {
  job_id: string;
  status: string;
}

const job = (status: string, job_id = 'j1'): Job => ({ job_id, status });
const event = (data: Job) => `event: job\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * A server whose GET /v1/jobs/j1 answers `states` in turn (the last again once they run out), and whose
 * /v1/events answers `stream` (the text of a stream that then ends, or a status). Counts the requests.
 */
function server(states: Job[], stream: string | number) {
  const asked = { gets: 0, streams: 0 };
  let next = 0;
  const fetcher = (async (input: string | URL | Request) => {
    const path = new URL(String(input)).pathname;
    if (path === '/v1/events') {
      asked.streams++;
      if (typeof stream === 'number') {
        return new Response(JSON.stringify({ error: stream, message: 'at most 8 event streams' }), {
          status: stream,
          headers: { 'retry-after': '5' },
        });
      }
      return new Response(stream, { headers: { 'content-type': 'text/event-stream' } });
    }
    asked.gets++;
    const state = states[Math.min(next++, states.length - 1)];
    return new Response(JSON.stringify(state), { headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  const notices: string[] = [];
  const api = createApi(settings, { fetcher, notice: (line) => notices.push(line) });
  return { api, asked, notices };
}

async function all(states: AsyncIterable<Job>): Promise<string[]> {
  const seen: string[] = [];
  for await (const state of states) seen.push(state.status);
  return seen;
}

test("follow hears a job's states from the event stream and asks GET only for the first", async () => {
  const stream = `retry: 3000\n: open\n\n${event(job('running', 'other'))}${event(job('running'))}${event(job('complete'))}`;
  const { api, asked } = server([job('planning')], stream);
  assert.deepEqual(await all(follow(api, 'job', 'j1', 60_000)), ['planning', 'running', 'complete']);
  assert.deepEqual(asked, { gets: 1, streams: 1 }, 'one stream, one GET; no wait of the interval');
});

test('a heartbeat of the stream asks GET once more: a change whose wake-up was lost is still heard', async () => {
  const { api, asked } = server([job('running'), job('complete')], ': open\n\n: heartbeat\n\n');
  assert.deepEqual(await all(follow(api, 'job', 'j1', 60_000)), ['running', 'complete']);
  assert.equal(asked.gets, 2);
});

test('a stream refused with 429 is not waited out: follow asks every interval instead', async () => {
  const { api, asked, notices } = server([job('planning'), job('running'), job('partial')], 429);
  const started = Date.now();
  assert.deepEqual(await all(follow(api, 'job', 'j1', 10)), ['planning', 'running', 'partial']);
  assert.ok(Date.now() - started < 4000, 'the Retry-After of 5 s was not waited');
  assert.deepEqual(notices, [], 'nothing said of a wait');
  assert.deepEqual(asked, { gets: 3, streams: 1 });
});

test('a stream that ends before the work has (a restart) leaves follow asking every interval', async () => {
  const { api, asked } = server([job('running'), job('running'), job('complete')], ': open\n\n');
  assert.equal((await ended(follow(api, 'job', 'j1', 10))).status, 'complete');
  assert.deepEqual(asked, { gets: 3, streams: 1 });
});

test('work that has finished already is answered by the one GET', async () => {
  const { api, asked } = server([job('canceled')], ': open\n\n');
  assert.deepEqual(await all(follow(api, 'job', 'j1', 60_000)), ['canceled']);
  assert.equal(asked.gets, 1);
});
