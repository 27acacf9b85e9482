// Sends (docs/api.md, "Send"): e-mail a link to a file, now or later, and the workspace's sends, newest
// first, with their status as the event stream changes it.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { time, visibleName } from '../format.js';
import type { Live, Send } from '../live.js';
import { Alert, message, useLoad } from './common.js';

export function Sends({ live }: { live: Live }) {
  const [source, setSource] = useState('');
  const [to, setTo] = useState('');
  const [text, setText] = useState('');
  const [when, setWhen] = useState('');
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const listed = useLoad(
    () =>
      api<{ sends: Send[]; next_cursor?: string }>(
        'GET',
        `/v1/sends?limit=50${cursor ? `&cursor=${cursor}` : ''}`,
      ),
    [cursor],
  );
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
      listed.reload();
    } catch (err) {
      setError(message(err));
    }
  };
  const cancel = async (s: Send) => {
    try {
      keep(await api<Send>('POST', `/v1/sends/${s.id}/cancel`));
      setError(undefined);
      listed.reload();
    } catch (err) {
      setError(message(err));
    }
  };
  // The page's rows, each in its latest state: what the stream brought wins over what was listed
  // (the stream's answers lack the file and recipients, which the list's keep).
  const rows = listed.data?.sends.map((s) => ({ ...s, ...live.sends.get(s.id) })) ?? [];
  const fresh = [...live.sends.values()].filter((s) => !rows.some((r) => r.id === s.id));
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
      <Alert error={listed.error} />
      <table>
        <caption class="sr-only">The workspace's sends, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Id</th>
            <th scope="col">Status</th>
            <th scope="col">File</th>
            <th scope="col">Recipients</th>
            <th scope="col">Scheduled</th>
            <th scope="col">Sent</th>
            <th scope="col">Error</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {[...(cursor ? [] : fresh), ...rows].map((s) => (
            <tr key={s.id}>
              <th scope="row">{s.id}</th>
              <td>
                <span class={`badge ${s.status}`}>{s.status}</span>
              </td>
              <td>{s.source === undefined ? '' : visibleName(s.source)}</td>
              <td>{s.recipients ?? ''}</td>
              <td>{time(s.scheduled_at)}</td>
              <td>{time(s.sent_at)}</td>
              <td>
                {s.error ?? ''}
                {s.refused?.length ? ` refused: ${s.refused.join(', ')}` : ''}
              </td>
              <td>
                {(s.status === 'scheduled' || s.status === 'queued') && (
                  <button
                    type="button"
                    class="danger"
                    aria-label={`Cancel send ${s.id}`}
                    onClick={() => cancel(s)}
                  >
                    Cancel
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {listed.data?.next_cursor && (
        <button type="button" onClick={() => setCursor(listed.data?.next_cursor)}>
          Older sends
        </button>
      )}
    </section>
  );
}
