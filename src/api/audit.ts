// An audit log event as the API answers it (docs/api.md, "Audit log"): the server's view type, the
// route's response schema (so /openapi.json) and the CLI's type come from these schemas.
import { type Static, Type } from 'typebox';
import { Timestamp } from './text.js';

export const AuditEvent = Type.Object({
  id: Type.String({ format: 'uuid' }),
  at: Timestamp,
  // The names are ACTIONS (src/domain/audit/audit.ts), which api/ may not import: the route checks ?action=.
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
