// The answers that stream (docs/api.md, "Reports", "Files" and "Live progress") as /openapi.json names
// them: the handlers write the bytes themselves, so these schemas only describe them. Not for the
// console: they name Node's streams.
import type { PassThrough, Readable } from 'node:stream';
import { Type } from 'typebox';
import { TimestampText } from './text.js';

/** A job's or a transfer's report, NDJSON or CSV, line by line. */
export const ReportBody = Type.Unsafe<Readable>({ type: 'string' });

/** A file's bytes, uploaded or downloaded. */
export const FileBody = Type.Unsafe<Readable>({
  type: 'string',
  format: 'binary',
  maxLength: Number.MAX_SAFE_INTEGER,
});

/** GET /v1/events: text/event-stream. */
export const EventStream = Type.Unsafe<PassThrough>({ type: 'string' });

/** `?since=` of GET /v1/events. */
export const EventsQuery = Type.Object(
  {
    since: Type.Optional(TimestampText({ description: 'also send what changed since then' })),
  },
  { additionalProperties: false },
);
