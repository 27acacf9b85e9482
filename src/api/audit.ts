// An audit log event as the API answers it, and the query that reads them (docs/api.md, "Audit log"):
// the server's view type, the route's schemas (so /openapi.json) and the CLI's type come from here.
import { type Static, Type } from 'typebox';
import { Paging } from './input.js';
import { oneOf, Timestamp } from './text.js';

/**
 * Every action the log records. A change through the API records the action of its route; the others
 * are recorded by ferry itself as they happen.
 */
export const ACTIONS = [
  'location.create',
  'location.replace',
  'location.rename',
  'location.delete',
  'location.refresh',
  'bucket.create',
  'file.upload',
  'copy',
  'sync',
  'verify',
  'move',
  'pull',
  'remove',
  // A dry run that made a plan. A plan's run is recorded as the action it performs (copy, sync, move,
  // remove); plan.run is what such runs were recorded as before, and may still be in the log.
  'plan.create',
  'plan.run',
  'job.retry',
  'job.cancel',
  'job.undo',
  'transfer.retry',
  'schedule.create',
  'schedule.update',
  'schedule.delete',
  'schedule.run',
  'share.create',
  'share.revoke',
  'send.create',
  'send.cancel',
  'webhook.create',
  'webhook.update',
  'webhook.delete',
  'key.create',
  'key.update',
  'key.revoke',
  // Not requests through the API: a share link's download and a wrong password at it, and an API
  // request whose key was refused (no workspace then).
  'share.download',
  'share.password_failed',
  'auth.refused',
] as const;
export type AuditAction = (typeof ACTIONS)[number];

export const AuditEvent = Type.Object({
  id: Type.String({ format: 'uuid' }),
  at: Timestamp,
  // One of ACTIONS, described rather than listed here as it always was; ?action= is checked against them.
  action: Type.String({
    description: 'What was done: one of the actions listed in docs/api.md, "Audit log"',
  }),
  target: Type.Optional(
    Type.String({
      description:
        "What it acted on: an id, or <location label>/<path> (a plan's: what it acts on, its counts and its id); never a secret",
    }),
  ),
  status: Type.Integer({ description: 'The HTTP status answered (for a share download, served)' }),
  key_id: Type.Optional(Type.String({ format: 'uuid', description: 'The API key that asked' })),
  key_name: Type.Optional(Type.String({ description: "That key's current name" })),
  ip: Type.String({ description: "The client's address" }),
  user_agent: Type.Optional(Type.String({ description: 'Its User-Agent, cut to 256 characters' })),
});
export type AuditEvent = Static<typeof AuditEvent>;

export const AuditPage = Type.Object({
  events: Type.Array(AuditEvent),
  next_cursor: Type.Optional(Type.String()),
});
export type AuditPage = Static<typeof AuditPage>;

/** `?limit=&cursor=&action=&key_id=&after=&before=` of GET /v1/audit. */
export const AuditQuery = Type.Object(
  {
    ...Paging.properties,
    action: Type.Optional(oneOf(ACTIONS, 'Only this action')),
    key_id: Type.Optional(
      Type.String({ format: 'uuid', maxLength: 36, description: "Only this API key's events" }),
    ),
    after: Type.Optional({
      ...Timestamp,
      description: 'Only events at or after this time (RFC 3339)',
    }),
    before: Type.Optional({ ...Timestamp, description: 'Only events before this time (RFC 3339)' }),
  },
  { additionalProperties: false },
);
export type AuditQuery = Static<typeof AuditQuery>;
