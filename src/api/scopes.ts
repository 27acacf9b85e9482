// The scopes of an API key (docs/api.md, "Scopes"): one list, free of runtime imports, so that the
// server's schemas (src/api/keys.ts), the CLI and the console all take it from here.

/**
 * What a key may do: `read` every read, preview and dry run; `transfer` copies, moves, pulls, syncs,
 * uploads, schedules and a job's retry and cancel; `remove` removals; `share` share links and sends;
 * `admin` locations' setup, buckets, API keys, webhooks and the audit log.
 */
export const SCOPES = ['read', 'transfer', 'remove', 'share', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];
