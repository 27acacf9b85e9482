// The audit log (docs/api.md, "Audit log"; docs/console.md, "Audit log"): the workspace's events newest
// first, filtered by action and key, older pages by "Show more". A target that is a location's id (or
// holds one) shows the location's label, a key's id the key's name. Reading it needs the admin scope; a
// key without it sees which scope is needed and asks nothing of ferry.
import { useState } from 'preact/hooks';
import type { ApiKey } from '../../../src/api/keys.js';
import { api } from '../api.js';
import { time, visibleName } from '../format.js';
import { useLocationLabels } from '../labels.js';
import { can, canWhole } from '../scopes.js';
import { Alert, message, Needs, useLoad, WholeWorkspace } from './common.js';

interface AuditEvent {
  id: string;
  at: string;
  action: string;
  target?: string;
  status: number;
  key_id?: string;
  key_name?: string;
  ip: string;
  user_agent?: string;
}
interface AuditPage {
  events: AuditEvent[];
  next_cursor?: string;
}

/**
 * The actions GET /v1/audit accepts, as the API itself lists them: the enum of its `action` parameter in
 * /openapi.json (the list lives in the server's domain, which the console does not bundle).
 */
async function auditActions(): Promise<string[]> {
  const doc = await api<{
    paths?: Record<string, { get?: { parameters?: Array<{ name: string; schema?: { enum?: unknown[] } }> } }>;
  }>('GET', '/openapi.json');
  const param = doc.paths?.['/v1/audit']?.get?.parameters?.find((p) => p.name === 'action');
  const list = param?.schema?.enum;
  if (!Array.isArray(list)) throw new Error('ferry did not list the audit actions (/openapi.json).');
  return list.map(String);
}

export function Audit() {
  return canWhole() ? (
    <AuditLog />
  ) : (
    <section aria-labelledby="h-audit">
      <h1 id="h-audit">Audit log</h1>
      {can('admin') ? (
        <WholeWorkspace what="the audit log, which records every location's changes," />
      ) : (
        <Needs scope="admin" what="to read the audit log" />
      )}
    </section>
  );
}

const query = (action: string, keyId: string, cursor?: string) => {
  const q = new URLSearchParams({ limit: '50' });
  if (action) q.set('action', action);
  if (keyId) q.set('key_id', keyId);
  if (cursor) q.set('cursor', cursor);
  return `/v1/audit?${q.toString()}`;
};

function AuditLog() {
  const named = useLocationLabels();
  const [action, setAction] = useState('');
  const [keyId, setKeyId] = useState('');
  const actions = useLoad(auditActions, []);
  const keys = useLoad(() => api<ApiKey[]>('GET', '/v1/tokens'), []);
  // The first page for the filters chosen, and the older pages Show more added under it: those are kept
  // with the filters they were read for, so an answer for filters changed since is never shown.
  const filters = `${action}\n${keyId}`;
  const { data, error, loading, reload, setError } = useLoad(
    () => api<AuditPage>('GET', query(action, keyId)),
    [action, keyId],
  );
  const [older, setOlder] = useState<{ for: string; events: AuditEvent[]; cursor?: string | undefined }>({
    for: '',
    events: [],
  });
  const mine = older.for === filters && data !== undefined;
  const cursor = mine ? older.cursor : data?.next_cursor;
  const [more, setMore] = useState(false);
  const showMore = async () => {
    if (!cursor) return;
    setMore(true);
    try {
      const page = await api<AuditPage>('GET', query(action, keyId, cursor));
      setOlder((o) => ({
        for: filters,
        events: [...(o.for === filters ? o.events : []), ...page.events],
        cursor: page.next_cursor,
      }));
    } catch (err) {
      setError(message(err));
    } finally {
      setMore(false);
    }
  };
  const rows = [...(data?.events ?? []), ...(mine ? older.events : [])];
  const keyNames = new Map((keys.data ?? []).map((k) => [k.id, k.name]));
  /** The target in words: a key by its name, a location by its label (the id in the tooltip). */
  const target = (e: AuditEvent) =>
    e.target === undefined
      ? '—'
      : visibleName((e.action.startsWith('key.') ? keyNames.get(e.target) : undefined) ?? named(e.target));
  const filtered = action !== '' || keyId !== '';
  return (
    <section aria-labelledby="h-audit">
      <h1 id="h-audit">Audit log</h1>
      <p>What was done in this workspace, by which key, from where: newest first.</p>
      <Alert error={actions.error ?? keys.error} />
      <form class="fields filters" onSubmit={(e) => e.preventDefault()}>
        <div class="field">
          <label for="audit-action">Action</label>
          <select
            id="audit-action"
            value={action}
            onChange={(e) => {
              setOlder({ for: '', events: [] });
              setAction(e.currentTarget.value);
            }}
          >
            <option value="">Any action</option>
            {(actions.data ?? []).map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="audit-key">Key</label>
          <select
            id="audit-key"
            value={keyId}
            onChange={(e) => {
              setOlder({ for: '', events: [] });
              setKeyId(e.currentTarget.value);
            }}
          >
            <option value="">Any key</option>
            {(keys.data ?? []).map((k) => (
              <option key={k.id} value={k.id}>
                {k.name}
                {k.revoked_at ? ' (revoked)' : ''}
              </option>
            ))}
          </select>
        </div>
        <div class="row">
          <button
            type="button"
            onClick={() => {
              setOlder({ for: '', events: [] });
              reload();
            }}
          >
            Reload
          </button>
        </div>
      </form>
      <Alert error={error} />
      {loading && !data ? <p>Loading…</p> : null}
      {data && rows.length === 0 ? (
        <p>{filtered ? 'No events match these filters.' : 'No events yet.'}</p>
      ) : null}
      {rows.length > 0 ? (
        <table class="audit">
          <caption class="sr-only">Audit events, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Action</th>
              <th scope="col">Target</th>
              <th scope="col">Status</th>
              <th scope="col">Key</th>
              <th scope="col">Address</th>
              <th scope="col">User agent</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((e) => (
              <tr key={e.id}>
                <th scope="row">{time(e.at)}</th>
                <td data-label="Action">{e.action}</td>
                <td data-label="Target" title={e.target}>
                  {target(e)}
                </td>
                <td data-label="Status">{e.status}</td>
                <td data-label="Key">{e.key_name ?? e.key_id ?? '—'}</td>
                <td data-label="Address">{e.ip}</td>
                <td data-label="User agent">{e.user_agent ? visibleName(e.user_agent) : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {cursor ? (
        <button type="button" disabled={more} onClick={() => void showMore()}>
          Show more
        </button>
      ) : null}
    </section>
  );
}
