// One location's panel (docs/api.md, "Location health"): its health in full, and for an admin key what
// may be done to it: refresh, rename, replace the secret, delete after typing its label.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ProviderView } from '../../../src/api/routes.js';
import { api } from '../api.js';
import { visibleName } from '../format.js';
import { can } from '../scopes.js';
import { Needs } from './common.js';
import { Fields, secretOf, useValues } from './location-fields.js';
import { Health, type Located } from './location-health.js';

export function Manage({
  l,
  providers,
  act,
  onDeleted,
  onClose,
}: {
  l: Located;
  providers: readonly ProviderView[] | undefined;
  act: (work: () => Promise<unknown>, done: string) => Promise<boolean>;
  onDeleted: (label: string) => void;
  onClose: () => void;
}) {
  const name = visibleName(l.label);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [l.id]);
  return (
    <section class="panel" aria-labelledby="h-manage">
      <h2 id="h-manage" tabIndex={-1} ref={heading}>
        {name} ({l.provider})
      </h2>
      <h3>Health</h3>
      <Health l={l} />
      {!can('admin') ? (
        <>
          <Needs scope="admin" what="to refresh, rename, replace the secret of or delete a location" />
          <button type="button" onClick={onClose}>
            Close
          </button>
        </>
      ) : (
        <ManageActions l={l} providers={providers} act={act} onDeleted={onDeleted} onClose={onClose} />
      )}
    </section>
  );
}

/** What an admin key may do to a location: refresh, rename, replace the secret, delete. */
function ManageActions({
  l,
  providers,
  act,
  onDeleted,
  onClose,
}: {
  l: Located;
  /** Undefined while GET /v1/providers is answered: the secret's form waits for it. */
  providers: readonly ProviderView[] | undefined;
  act: (work: () => Promise<unknown>, done: string) => Promise<boolean>;
  onDeleted: (label: string) => void;
  onClose: () => void;
}) {
  const name = visibleName(l.label);
  const [label, setLabel] = useState(l.label);
  const [values, set, clear] = useValues();
  const [typed, setTyped] = useState('');
  const form = providers?.find((p) => p.id === l.provider);
  return (
    <>
      {l.health.rotation_class !== undefined ? (
        <button
          type="button"
          onClick={() =>
            void act(
              () => api('POST', '/v1/locations/refresh', { body: { id: l.id } }),
              `Refresh of ${name} requested.`,
            )
          }
        >
          Refresh now
        </button>
      ) : null}

      <h3>Rename</h3>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          void act(
            () => api('PATCH', '/v1/locations', { body: { id: l.id, label } }),
            `Renamed to ${visibleName(label)}.`,
          );
        }}
      >
        <label for="rename-label">New label</label>
        <input
          id="rename-label"
          required
          maxLength={256}
          value={label}
          onInput={(e) => setLabel(e.currentTarget.value)}
        />
        <button type="submit">Rename</button>
      </form>

      {form ? (
        <>
          <h3>Replace the secret</h3>
          <form
            class="fields"
            onSubmit={(e) => {
              e.preventDefault();
              const secret = secretOf(form, values);
              clear();
              void act(
                () => api('PUT', '/v1/locations', { body: { id: l.id, secret } }),
                `The secret of ${name} was replaced.`,
              );
            }}
          >
            <p class="help">
              The new credentials take effect at the next operation; a failed or paused location becomes
              active again. Nothing is checked with the provider until then.
            </p>
            <Fields fields={form.secret} values={values} set={set} prefix="replace" />
            <div class="row">
              <button type="submit">Replace secret</button>
            </div>
          </form>
        </>
      ) : null}

      <h3>Delete</h3>
      <form
        class="fields"
        onSubmit={(e) => {
          e.preventDefault();
          if (typed !== l.label) return;
          void act(() => api('DELETE', '/v1/locations', { body: { id: l.id } }), `${name} was deleted.`).then(
            (ok) => ok && onDeleted(l.label),
          );
        }}
      >
        <p id="delete-what">
          Deleting {name} forgets its credentials for good; the files in the storage itself are not touched.
          Its share links stop working and its sends are deleted with it, and transfers and jobs already
          accepted that use it fail when they run. This cannot be undone.
        </p>
        <div class="field">
          <label for="delete-confirm">Type {name} to confirm</label>
          <input
            id="delete-confirm"
            autocomplete="off"
            spellcheck={false}
            aria-describedby="delete-what"
            value={typed}
            onInput={(e) => setTyped(e.currentTarget.value)}
          />
        </div>
        <div class="row">
          <button type="submit" class="danger" disabled={typed !== l.label}>
            Delete {name}
          </button>
          <button type="button" onClick={onClose}>
            Close
          </button>
        </div>
      </form>
    </>
  );
}
