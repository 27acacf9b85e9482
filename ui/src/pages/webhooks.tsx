// Webhooks (docs/webhooks.md): the workspace's endpoints with their state, create one (its signing
// secret shown once), each one's delivery attempts, re-enable a disabled one, delete one. All of it
// needs the admin scope; a key without it sees why instead.
import { useState } from 'preact/hooks';
import type { Delivery, Webhook, WebhookEvent } from '../../../src/api/routes.js';
import { api } from '../api.js';
import { time } from '../format.js';
import { can, canWhole } from '../scopes.js';
import { Alert, message, Needs, Notice, useLoad, WholeWorkspace } from './common.js';
import { actions, type Column, More, Table, usePages } from './table.js';

/** Every event an endpoint can subscribe to (docs/webhooks.md, "Events"), with when it happens. */
const EVENTS: Record<WebhookEvent, string> = {
  'transfer.complete': 'a copy, move, remove or pull of one object ends well',
  'transfer.failed': 'such a transfer fails',
  'job.complete': 'a bulk copy ends with every object copied',
  'job.partial': 'a bulk copy ends with some objects failed',
  'job.failed': 'a bulk copy fails',
  'job.canceled': 'a job is canceled',
  'send.sent': "a send's mail went out",
  'send.failed': 'a send failed for good',
  'send.canceled': 'a send was canceled',
  'location.status_changed': 'a location becomes active, needs attention or failed',
  'share.downloaded': 'a share link is downloaded',
};

/** What a delivery attempt's `error` means (docs/webhooks.md, "The deliveries log"). */
const ATTEMPT_ERRORS: Record<string, string> = {
  timeout: 'timeout: no whole answer within the time allowed',
  connection: 'connection: the endpoint could not be reached',
  dns: "dns: the endpoint's name did not resolve",
  blocked: 'blocked: the address is not allowed (egress guard)',
  crashed: "crashed: ferry failed while making the attempt (not the endpoint's doing)",
};

const DELIVERY_COLUMNS: Column<Delivery>[] = [
  { name: 'Time', cell: (d) => time(d.at) },
  { name: 'Event', cell: (d) => d.type },
  { name: 'Status code', cell: (d) => d.status_code ?? '—' },
  { name: 'Attempt', cell: (d) => d.attempt },
  { name: 'Took', cell: (d) => `${d.duration_ms} ms` },
  { name: 'Error', cell: (d) => (d.error ? (ATTEMPT_ERRORS[d.error] ?? d.error) : '—') },
];

function DeliveryLog({ hook, onClose }: { hook: Webhook; onClose: () => void }) {
  const pages = usePages(
    async (cursor) => {
      const page = await api('GET', '/v1/webhooks/{id}/deliveries', {
        id: hook.id,
        query: { limit: '50', cursor: cursor || undefined },
      });
      return { items: page.deliveries, next_cursor: page.next_cursor };
    },
    [hook.id],
  );
  const { data, error, loading, reload, rows } = pages;
  return (
    <section class="panel" aria-labelledby="h-deliveries">
      <h2 id="h-deliveries">Deliveries to {hook.url}</h2>
      <Alert error={error} />
      <div class="row">
        <button type="button" onClick={reload}>
          Reload deliveries
        </button>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      {loading && !data ? <p>Loading…</p> : null}
      {data && rows.length === 0 ? <p>No delivery attempts yet.</p> : null}
      {rows.length > 0 ? (
        <Table
          caption="Delivery attempts, newest first"
          columns={DELIVERY_COLUMNS}
          rows={rows}
          rowKey={(d) => d.id}
        />
      ) : null}
      <More pages={pages}>Older attempts</More>
    </section>
  );
}

export function Webhooks() {
  return canWhole() ? (
    <WebhookList />
  ) : (
    <section aria-labelledby="h-webhooks">
      <h1 id="h-webhooks">Webhooks</h1>
      {can('admin') ? (
        <WholeWorkspace what="a webhook, which receives every location's events," />
      ) : (
        <Needs
          scope="admin"
          what="to list, create, re-enable and delete webhooks and read their deliveries"
        />
      )}
    </section>
  );
}

function WebhookList() {
  const { data, error, loading, reload } = useLoad(
    () => api('GET', '/v1/webhooks').then((r) => r.webhooks),
    [],
  );
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<WebhookEvent[]>([]);
  const [secret, setSecret] = useState<string | undefined>(undefined);
  const [copied, setCopied] = useState(false);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const [failed, setFailed] = useState<string | undefined>(undefined);
  const [open, setOpen] = useState<string | undefined>(undefined);
  const act = async (work: () => Promise<unknown>, done?: string) => {
    try {
      await work();
      setFailed(undefined);
      setNotice(done);
      reload();
    } catch (err) {
      setNotice(undefined);
      setFailed(message(err));
    }
  };
  const opened = data?.find((h) => h.id === open);
  return (
    <section aria-labelledby="h-webhooks">
      <h1 id="h-webhooks">Webhooks</h1>
      <Alert error={error ?? failed} />
      {notice && <Notice>{notice}</Notice>}
      <form
        class="fields panel"
        aria-labelledby="h-new-webhook"
        onSubmit={(e) => {
          e.preventDefault();
          void act(async () => {
            const made = await api('POST', '/v1/webhooks', { body: { url, events } });
            setSecret(made.secret);
            setCopied(false);
            setUrl('');
            setEvents([]);
          });
        }}
      >
        <h2 id="h-new-webhook">New webhook</h2>
        <div class="field">
          <label for="hook-url">Endpoint URL</label>
          <input
            id="hook-url"
            type="url"
            required
            maxLength={2048}
            placeholder="https://hooks.example.com/ferry"
            value={url}
            onInput={(e) => setUrl(e.currentTarget.value)}
          />
        </div>
        <fieldset>
          <legend>Events to send</legend>
          {(Object.keys(EVENTS) as WebhookEvent[]).map((name) => (
            <div class="check" key={name}>
              <input
                type="checkbox"
                id={`hook-event-${name}`}
                checked={events.includes(name)}
                onChange={(e) => {
                  const on = e.currentTarget.checked;
                  setEvents((list) => (on ? [...list, name] : list.filter((x) => x !== name)));
                }}
              />
              <label for={`hook-event-${name}`}>
                {name} <span class="small">{EVENTS[name]}</span>
              </label>
            </div>
          ))}
        </fieldset>
        <div class="row">
          <button type="submit" disabled={events.length === 0} aria-describedby="hook-create-help">
            Create webhook
          </button>
          <span class="help" id="hook-create-help">
            {events.length === 0 ? 'Choose at least one event.' : `${events.length} chosen.`}
          </span>
        </div>
      </form>
      {secret && (
        <Notice>
          <p>The signing secret, shown only now: keep it where your endpoint checks signatures.</p>
          <input
            readOnly
            class="secret"
            aria-label="Signing secret"
            value={secret}
            onFocus={(e) => e.currentTarget.select()}
          />
          <div class="row">
            <button
              type="button"
              onClick={() =>
                void navigator.clipboard?.writeText(secret).then(
                  () => setCopied(true),
                  () => setCopied(false),
                )
              }
            >
              Copy secret
            </button>
            <button type="button" onClick={() => setSecret(undefined)}>
              Done
            </button>
            {copied ? <span>Copied.</span> : null}
          </div>
        </Notice>
      )}
      {loading && !data ? <p>Loading…</p> : null}
      {data && data.length === 0 ? <p>No webhooks yet.</p> : null}
      {data && data.length > 0 ? (
        <Table
          caption="Webhook endpoints of this workspace"
          columns={[
            { name: 'URL', class: 'url', cell: (h) => h.url },
            { name: 'Events', cell: (h) => h.events.join(', ') },
            {
              name: 'State',
              cell: (h) => (
                <>
                  <span class={`badge ${h.status}`}>{h.status}</span>
                  {h.status === 'disabled' ? (
                    <div class="small">
                      {h.disabled_reason ?? 'disabled'}
                      {h.disabled_at ? ` (since ${time(h.disabled_at)})` : ''}
                    </div>
                  ) : h.failing_since ? (
                    <div class="small">failing since {time(h.failing_since)}</div>
                  ) : null}
                </>
              ),
            },
            { name: 'Created', cell: (h) => time(h.created_at) },
            actions<Webhook>((h) => (
              <>
                <button
                  type="button"
                  aria-label={`Deliveries to ${h.url}`}
                  aria-expanded={open === h.id}
                  onClick={() => setOpen(open === h.id ? undefined : h.id)}
                >
                  Deliveries
                </button>
                {h.status === 'disabled' ? (
                  <button
                    type="button"
                    aria-label={`Re-enable ${h.url}`}
                    onClick={() =>
                      void act(
                        () => api('PATCH', '/v1/webhooks/{id}', { id: h.id, body: { status: 'enabled' } }),
                        `${h.url} is enabled again.`,
                      )
                    }
                  >
                    Re-enable
                  </button>
                ) : null}
                <button
                  type="button"
                  class="danger"
                  aria-label={`Delete ${h.url}`}
                  onClick={() => {
                    if (
                      confirm(
                        `Delete the webhook ${h.url}? Its queued events and its delivery log go with it.`,
                      )
                    )
                      void act(async () => {
                        await api('DELETE', '/v1/webhooks/{id}', { id: h.id });
                        if (open === h.id) setOpen(undefined);
                      }, `${h.url} deleted.`);
                  }}
                >
                  Delete
                </button>
              </>
            )),
          ]}
          rows={data}
          rowKey={(h) => h.id}
        />
      ) : null}
      {opened ? <DeliveryLog key={opened.id} hook={opened} onClose={() => setOpen(undefined)} /> : null}
    </section>
  );
}
