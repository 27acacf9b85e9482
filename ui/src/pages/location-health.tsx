// Each location with its refresh health, as the console reads it and shows it (docs/api.md,
// "Locations" and "Location health"): the list of locations, each with its status, and one location's
// health in words.
import type { LocationStatusView, LocationSummary } from '../../../src/api/routes.js';
import { api } from '../api.js';
import { time } from '../format.js';

/** A location as listed, with its health (POST /v1/locations/status). */
export type Located = LocationSummary & { health: LocationStatusView };

/** Every location the key may see, each with its health. */
export async function load(): Promise<Located[]> {
  const list = await api('GET', '/v1/locations');
  return Promise.all(
    list.map(async (l) => ({
      ...l,
      health: await api('POST', '/v1/locations/status', { body: { id: l.id } }),
    })),
  );
}

/** The refresher's view of one location, as words (docs/api.md, "Location health"). */
export function Health({ l }: { l: Located }) {
  const h = l.health;
  // Only OAuth credentials rotate (docs/api.md, "Location health": rotation_class).
  const oauth = h.rotation_class !== undefined;
  return (
    <dl class="health">
      <dt>Status</dt>
      <dd>
        <span class={`badge ${h.status}`}>{h.status.replace('_', ' ')}</span>
        {h.status === 'failed'
          ? ' The grant is gone: connect the account again and replace the secret.'
          : h.status === 'needs_attention'
            ? ' A person must act: fix the cause, then Refresh, or replace the secret.'
            : ''}
      </dd>
      {h.failure_reason ? (
        <>
          <dt>Why</dt>
          <dd>{h.failure_reason}</dd>
        </>
      ) : null}
      {h.last_refresh_error && h.last_refresh_error !== h.failure_reason ? (
        <>
          <dt>Refresher's last error</dt>
          <dd>{h.last_refresh_error}</dd>
        </>
      ) : null}
      {l.validation_error && l.validation_error !== h.failure_reason ? (
        <>
          <dt>Provider's answer</dt>
          <dd>{l.validation_error}</dd>
        </>
      ) : null}
      {oauth ? (
        <>
          <dt>Access token expires</dt>
          <dd>{time(h.access_token_expires_at)}</dd>
          <dt>Last refresh attempt</dt>
          <dd>
            {time(h.last_refresh_attempt_at)}
            {h.refresh_requested ? ' (a refresh is requested)' : ''}
          </dd>
          <dt>Failed refreshes in a row</dt>
          <dd>{h.consecutive_refresh_failures}</dd>
          <dt>Refresh token</dt>
          <dd>
            {h.rotation_class === 'oauth-single-use' ? 'replaced at every refresh' : 'kept across refreshes'}
          </dd>
        </>
      ) : (
        <>
          <dt>Credentials</dt>
          <dd>static keys: nothing to refresh</dd>
        </>
      )}
    </dl>
  );
}
