// What the signed-in key may do (docs/api.md, "Scopes"; docs/console.md, "Keys with fewer scopes"):
// its own item from GET /v1/key, read once at sign-in and kept with the session, and can(scope), the
// one question every page asks before it offers an action. The server checks again on every request;
// this only keeps the console from offering what would be refused.
import type { ApiKey } from '../../src/api/routes.js';
import { SCOPES, type Scope } from '../../src/api/scopes.js';
import { api } from './api.js';

export { SCOPES, type Scope };

/** What each scope lets a key do, in the console's words. */
export const SCOPE_WORDS: Record<Scope, string> = {
  read: 'see locations, files, transfers, jobs, schedules, shares and sends; preview',
  transfer: 'copy, move, sync and upload; schedules; retry and cancel jobs',
  remove: 'remove files',
  share: 'make and revoke share links; send files by e-mail',
  admin: 'add and change locations, make buckets, manage API keys and webhooks',
};

/** The signed-in key as GET /v1/key answers it. */
export type KeyInfo = ApiKey;

let current: KeyInfo | undefined;

/** The key's own item, with the key already stored (storeKey) for the request. */
export function readKey(): Promise<KeyInfo> {
  return api('GET', '/v1/key');
}

/** Keeps (or, signed out, forgets) what the signed-in key may do. */
export function setKeyInfo(info: KeyInfo | undefined): void {
  current = info;
}

export function keyInfo(): KeyInfo | undefined {
  return current;
}

/** Whether the signed-in key has `scope`: the only check the pages make before offering an action. */
export function can(scope: Scope): boolean {
  return current?.scopes.includes(scope) ?? false;
}

/**
 * Whether the signed-in key is limited to some locations (docs/api.md, "Scopes", "Locations"): the
 * server answers only their locations and work, and refuses what acts on the whole workspace.
 */
export function limitedToLocations(): boolean {
  return current?.locations !== undefined;
}

/** Whether the key may act on the whole workspace (a new location, webhooks, the audit log). */
export function canWhole(): boolean {
  return can('admin') && !limitedToLocations();
}

/** The scopes the signed-in key lacks, in ferry's order. */
export function lacking(): Scope[] {
  return SCOPES.filter((s) => !can(s));
}
