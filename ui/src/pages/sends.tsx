// Sends (docs/api.md, "Send"): e-mail a link to a file, now or later, with every option of POST /send,
// from this page (the file typed) or from Browse (the file picked there: SendForm); and the workspace's
// sends, newest first, with their status as the event stream changes it, and cancel after a
// confirmation.
import { useRef, useState } from 'preact/hooks';
import type { AnySend } from '../../../src/api/routes.js';
import { api } from '../api.js';
import { time, visibleName } from '../format.js';
import type { Live } from '../live.js';
import { can } from '../scopes.js';
import { Alert, message, Needs, Notice } from './common.js';
import { ConfirmButton } from './confirm.js';
import { actions, More, Table, usePages } from './table.js';

/** "a@x, b@y" as a list of addresses; empty text is no list. */
const addresses = (text: string) =>
  text
    .split(/[,;]/)
    .map((a) => a.trim())
    .filter(Boolean);

const EMPTY = {
  source: '',
  to: '',
  cc: '',
  bcc: '',
  replyTo: '',
  name: '',
  text: '',
  password: '',
  expires: '',
  when: '',
};

/**
 * The send form. With `file`, the file is fixed (picked in Browse, sent as an exact name); without,
 * it is typed as `location/path`. It sends once per click: the button is disabled while the request
 * runs, a click meanwhile does nothing, and the fields are cleared after success, so the next click
 * asks for the recipients again instead of sending the same mail twice.
 */
export function SendForm({ file, onSent }: { file?: string; onSent?: (s: AnySend) => void }) {
  const [f, setF] = useState(EMPTY);
  const [busy, setBusy] = useState(false);
  const sending = useRef(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const [done, setDone] = useState<string | undefined>(undefined);
  const field = (key: keyof typeof EMPTY, label: string, props: Record<string, unknown> = {}) => (
    <>
      <label for={`send-${key}`}>{label}</label>
      <input
        id={`send-${key}`}
        value={f[key]}
        onInput={(e) => setF({ ...f, [key]: e.currentTarget.value })}
        {...props}
      />
    </>
  );
  const submit = async (e: Event) => {
    e.preventDefault();
    if (sending.current) return;
    sending.current = true;
    setBusy(true);
    try {
      setDone(undefined);
      const s = await api('POST', '/send', {
        body: {
          ...(file ? { source: file, literal: true } : { source: f.source }),
          to: addresses(f.to),
          ...(f.cc ? { cc: addresses(f.cc) } : {}),
          ...(f.bcc ? { bcc: addresses(f.bcc) } : {}),
          ...(f.replyTo ? { replyTo: addresses(f.replyTo) } : {}),
          ...(f.name ? { sender_name: f.name } : {}),
          ...(f.text ? { text: f.text } : {}),
          ...(f.password ? { password: f.password } : {}),
          ...(f.expires ? { expires_at: new Date(f.expires).toISOString() } : {}),
          ...(f.when
            ? { scheduledAt: f.when, timezone: Intl.DateTimeFormat().resolvedOptions().timeZone }
            : {}),
        },
      });
      setF(EMPTY);
      setError(undefined);
      setDone(
        s.status === 'scheduled'
          ? `Send scheduled for ${time(s.scheduled_at)}.`
          : 'Send queued: the mail goes out now.',
      );
      onSent?.(s);
    } catch (err) {
      setError(message(err));
    } finally {
      sending.current = false;
      setBusy(false);
    }
  };
  return (
    <>
      <Alert error={error} />
      {done && <Notice>{done}</Notice>}
      <p class="small">
        To, Cc and Bcc take several addresses, comma-separated; only To is needed. Your name is in From and
        the subject. The link password is never written in the mail: pass it on another way.
      </p>
      <form onSubmit={submit} class="grid">
        {!file && field('source', 'File (location/path)', { required: true })}
        {field('to', 'To (comma-separated)', { required: true, autocomplete: 'off' })}
        {field('cc', 'Cc', { autocomplete: 'off' })}
        {field('bcc', 'Bcc', { autocomplete: 'off' })}
        {field('replyTo', 'Reply-to', { autocomplete: 'off' })}
        {field('name', 'Your name', { maxLength: 100 })}
        <label for="send-text">Message</label>
        <textarea
          id="send-text"
          value={f.text}
          onInput={(e) => setF({ ...f, text: e.currentTarget.value })}
        />
        {field('password', 'Link password', {
          type: 'password',
          autocomplete: 'new-password',
        })}
        {field('expires', 'Link expires', { type: 'datetime-local' })}
        {field('when', 'When (empty: now; or "tomorrow at 9am")')}
        <button type="submit" disabled={busy}>
          {busy ? 'Sending…' : 'Send'}
        </button>
      </form>
    </>
  );
}

export function Sends({ live }: { live: Live }) {
  const listed = usePages(async (cursor) => {
    const page = await api('GET', '/v1/sends', { query: { limit: '50', cursor: cursor || undefined } });
    return { items: page.sends, next_cursor: page.next_cursor };
  }, []);
  const [error, setError] = useState<string | undefined>(undefined);
  const [, setTick] = useState(0);
  const keep = (s: AnySend) => {
    live.sends.set(s.id, s);
    setTick((n) => n + 1);
  };
  const cancel = async (s: AnySend) => {
    try {
      keep(await api('POST', '/v1/sends/{id}/cancel', { id: s.id }));
      setError(undefined);
      listed.reload();
    } catch (err) {
      setError(message(err));
    }
  };
  // The rows, each in its latest state: what the stream brought wins over what was listed (the
  // stream's answers lack the file and recipients, which the list's keep); a send the stream brought
  // that no page lists yet comes first.
  const rows = listed.rows.map((s) => ({ ...s, ...live.sends.get(s.id) }));
  const fresh = [...live.sends.values()].filter((s) => !rows.some((r) => r.id === s.id));
  return (
    <section aria-labelledby="h-sends">
      <h1 id="h-sends">Sends</h1>
      {can('share') ? (
        <SendForm
          onSent={(s) => {
            keep(s);
            listed.reload();
          }}
        />
      ) : (
        <Needs scope="share" what="to send a file or cancel a send" />
      )}
      <Alert error={error} />
      <Alert error={listed.error} />
      <Table
        caption="The workspace's sends, newest first"
        columns={[
          { name: 'Id', cell: (s) => s.id },
          { name: 'Status', cell: (s) => <span class={`badge ${s.status}`}>{s.status}</span> },
          { name: 'File', cell: (s) => (s.source === undefined ? '' : visibleName(s.source)) },
          { name: 'Recipients', cell: (s) => s.recipients ?? '' },
          { name: 'Scheduled', cell: (s) => time(s.scheduled_at) },
          { name: 'Sent', cell: (s) => time(s.sent_at) },
          {
            name: 'Error',
            cell: (s) => `${s.error ?? ''}${s.refused?.length ? ` refused: ${s.refused.join(', ')}` : ''}`,
          },
          actions<AnySend>(
            (s) =>
              (s.status === 'scheduled' || s.status === 'queued') &&
              can('share') && (
                <ConfirmButton
                  label={`Cancel send ${s.id}`}
                  question="Cancel this send? Its mail will not go out."
                  confirm={{ text: 'Yes, cancel send', label: `Yes, cancel send ${s.id}` }}
                  keep={{ text: 'Keep send', label: `Keep send ${s.id}` }}
                  onConfirm={() => void cancel(s)}
                >
                  Cancel
                </ConfirmButton>
              ),
          ),
        ]}
        rows={[...fresh, ...rows]}
        rowKey={(s) => s.id}
      />
      <More pages={listed}>Older sends</More>
    </section>
  );
}
