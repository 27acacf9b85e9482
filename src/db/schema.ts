// Table types for Kysely. Times are epoch milliseconds (BIGINT on PostgreSQL, INTEGER on SQLite) and
// booleans are 0/1 integers, so that both databases return the same JavaScript values.
import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

export interface WorkspacesTable {
  id: string;
  name: string;
  created_at: number;
  /** Changes whenever a location of the workspace changes (kept by triggers). */
  locations_version: Generated<number>;
}

export interface ApiKeysTable {
  id: string;
  workspace_id: string;
  name: string;
  /** SHA-256 of the bearer token, hex. The token itself is never stored. */
  token_hash: string;
  created_at: number;
  updated_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
}

export interface LocationsTable {
  id: string;
  workspace_id: string;
  provider: string;
  label: string;
  /** JSON object text, or null when empty. */
  metadata: string | null;
  /** The sealed secret (src/crypto/envelope.ts). */
  secret_envelope: string;
  status: string;
  validation_error: string | null;
  access_token_expires_at: number | null;
  refresh_requested: Generated<number>;
  consecutive_refresh_failures: Generated<number>;
  last_refresh_attempt_at: number | null;
  failure_reason: string | null;
  last_refresh_error: string | null;
  created_at: number;
  updated_at: number;
}

export interface Database {
  workspaces: WorkspacesTable;
  api_keys: ApiKeysTable;
  locations: LocationsTable;
}

export type WorkspaceRow = Selectable<WorkspacesTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type NewApiKey = Insertable<ApiKeysTable>;
export type LocationRow = Selectable<LocationsTable>;
export type NewLocation = Insertable<LocationsTable>;
export type LocationUpdate = Updateable<LocationsTable>;
