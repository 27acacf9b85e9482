// A share link as the API shows it (docs/api.md, "Share links"): its state, read from its row (revoked
// before expired before used up), and its view. The owner's routes and the share.downloaded webhook
// event show the same view.
import type { Share } from '../../api/shares.js';
import { toRfc3339 } from '../../clock.js';
import type { ShareRow } from '../../db/schema.js';
import type { ShareState } from '../../states.js';

/** A share link as the API shows it. */
export type ShareView = Share;

/** Revoked before expired before used up: the first reason a link serves nothing is the one shown. */
export function shareState(row: ShareRow, now: number): ShareState {
  if (row.revoked_at !== null) return 'revoked';
  if (row.expires_at !== null && row.expires_at <= now) return 'expired';
  if (row.max_downloads !== null && row.downloads >= row.max_downloads) return 'used_up';
  return 'active';
}

export function shareView(row: ShareRow, now: number): ShareView {
  const v: ShareView = {
    id: row.id,
    source: row.source,
    state: shareState(row, now),
    created_at: toRfc3339(row.created_at),
    has_password: row.password_hash !== null,
    downloads: row.downloads,
  };
  if (row.expires_at !== null) v.expires_at = toRfc3339(row.expires_at);
  if (row.revoked_at !== null) v.revoked_at = toRfc3339(row.revoked_at);
  if (row.max_downloads !== null) v.max_downloads = row.max_downloads;
  if (row.last_download_at !== null) v.last_download_at = toRfc3339(row.last_download_at);
  return v;
}
