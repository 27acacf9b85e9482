// Sends (docs/api.md, "Send"): e-mail a link to a file, now or later, and the status of the sends this
// tab has seen (made here, or changing on the event stream), or looked up by id.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { time } from '../format.js';
import type { Live, Send } from '../live.js';
import { Alert, message } from './common.js';

export function Sends({ live }: { live: Live }) {
  const [source, setSource] = useState('');
  const [to, setTo] = useState('');
  const [text, setText] = useState('');
  const [when, setWhen] = useState('');
  const [lookup, setLookup] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const [, setTick] = useState(0);
  const keep = (s: Send) => {
    live.sends.set(s.id, s);
    setTick((n) => n + 1);
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      const s = await api<Send>('POST', '/send', {
        source,
        to: to
          .split(',')
          .map((a) => a.trim())
          .filter(Boolean),
        ...(text ? { text } : {}),
        ...(when ? { scheduledAt: when, timezone: Intl.DateTimeFormat().resolvedOptions().timeZone } : {}),
      });
      keep(s);
      setError(undefined);
    } catch (err) {
      setError(message(err));
    }
  };
  const find = async (e: Event) => {
    e.preventDefault();
    try {
      keep(await api<Send>('GET', `/v1/sends/${encodeURIComponent(lookup.trim())}`));
      setError(undefined);
    } catch (err) {
      setError(message(err));
    }
  };
  return (
    <section aria-labelledby="h-sends">
      <h1 id="h-sends">Sends</h1>
      <Alert error={error} />
      <form onSubmit={submit} class="grid">
        <label for="send-source">File (location/path)</label>
        <input id="send-source" required value={source} onInput={(e) => setSource(e.currentTarget.value)} />
        <label for="send-to">To (comma-separated)</label>
        <input id="send-to" required value={to} onInput={(e) => setTo(e.currentTarget.value)} />
        <label for="send-text">Message</label>
        <textarea id="send-text" value={text} onInput={(e) => setText(e.currentTarget.value)} />
        <label for="send-when">When (empty: now; or "tomorrow at 9am")</label>
        <input id="send-when" value={when} onInput={(e) => setWhen(e.currentTarget.value)} />
        <button type="submit">Send</button>
      </form>
      <form onSubmit={find} class="row">
        <label for="send-id">Send id</label>
        <input id="send-id" required value={lookup} onInput={(e) => setLookup(e.currentTarget.value)} />
        <button type="submit">Look up</button>
      </form>
      <table>
        <caption class="sr-only">Sends seen in this tab</caption>
        <thead>
          <tr>
            <th scope="col">Id</th>
            <th scope="col">Status</th>
            <th scope="col">Scheduled</th>
            <th scope="col">Sent</th>
            <th scope="col">Error</th>
          </tr>
        </thead>
        <tbody>
          {[...live.sends.values()].map((s) => (
            <tr key={s.id}>
              <th scope="row">{s.id}</th>
              <td>
                <span class={`badge ${s.status}`}>{s.status}</span>
              </td>
              <td>{time(s.scheduled_at)}</td>
              <td>{time(s.sent_at)}</td>
              <td>
                {s.error ?? ''}
                {s.refused?.length ? ` refused: ${s.refused.join(', ')}` : ''}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
