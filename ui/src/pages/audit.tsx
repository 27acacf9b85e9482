// The audit log (docs/api.md, "Audit log"; docs/console.md, "Audit log"): the workspace's events newest
// first, filtered by action and key, older pages by "Show more". A target that is a location's id (or
// holds one) shows the location's label, a key's id the key's name. Reading it needs the admin scope; a
// key without it sees which scope is needed and asks nothing of ferry.
import { useState } from 'preact/hooks';
import type { AuditAction, AuditEvent } from '../../../src/api/routes.js';
import { api } from '../api.js';
import { time, visibleName } from '../format.js';
import { useLocationLabels } from '../labels.js';
import { can, canWhole } from '../scopes.js';
import { Alert, Needs, useLoad, WholeWorkspace } from './common.js';
import { More, Table, usePages } from './table.js';

/**
 * The actions GET /v1/audit accepts, as the API itself lists them: the enum of its `action` parameter in
 * /openapi.json (the list lives in the server's domain, which the console does not bundle).
 */
async function auditActions(): Promise<string[]> {
  const doc = await api('GET', '/openapi.json');
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

/** GET /v1/audit's query; the action is one /openapi.json listed (auditActions). */
const query = (action: string, keyId: string, cursor?: string) => ({
  limit: '50',
  action: (action || undefined) as AuditAction | undefined,
  key_id: keyId || undefined,
  cursor: cursor || undefined,
});

function AuditLog() {
  const named = useLocationLabels();
  const [action, setAction] = useState('');
  const [keyId, setKeyId] = useState('');
  const actions = useLoad(auditActions, []);
  const keys = useLoad(() => api('GET', '/v1/tokens'), []);
  // The first page for the filters chosen, and the older pages Show more added under it.
  const pages = usePages(
    async (cursor) => {
      const page = await api('GET', '/v1/audit', { query: query(action, keyId, cursor) });
      return { items: page.events, next_cursor: page.next_cursor };
    },
    [action, keyId],
  );
  const { data, error, loading, reload, rows } = pages;
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
          <select id="audit-action" value={action} onChange={(e) => setAction(e.currentTarget.value)}>
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
          <select id="audit-key" value={keyId} onChange={(e) => setKeyId(e.currentTarget.value)}>
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
          <button type="button" onClick={reload}>
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
        <Table
          caption="Audit events, newest first"
          class="audit"
          columns={[
            { name: 'Time', cell: (e) => time(e.at) },
            { name: 'Action', cell: (e) => e.action },
            { name: 'Target', cell: target, title: (e) => e.target },
            { name: 'Status', cell: (e) => e.status },
            { name: 'Key', cell: (e) => e.key_name ?? e.key_id ?? '—' },
            { name: 'Address', cell: (e) => e.ip },
            { name: 'User agent', cell: (e) => (e.user_agent ? visibleName(e.user_agent) : '—') },
          ]}
          rows={rows}
          rowKey={(e) => e.id}
        />
      ) : null}
      <More pages={pages}>Show more</More>
    </section>
  );
}
