// A schedule as the API answers it, and the bodies that make and change one (docs/api.md, "Schedules"):
// one TypeBox schema each, from which come the routes' schemas (so /openapi.json), the server's view type
// and the CLI's, imported type-only.
import { type Static, Type } from 'typebox';
import { JOB_STATES, SCHEDULE_RUN_OUTCOMES } from '../states.js';
import { ScheduledCopy, ScheduledSync } from './copy.js';
import { Timezone } from './input.js';
import { Label, oneOf, SINGLE_LINE, Timestamp, text } from './text.js';
import { Counts } from './transfers.js';
import { VerifyBody } from './verify.js';

/** The longest `every`: "every monday, wednesday and friday at 11:30pm" is 46 characters. */
export const EVERY_MAX = 100;

export const ScheduleAction = Type.Object(
  {},
  {
    additionalProperties: true,
    description: 'As given: {"copy": {...}}, {"sync": {...}} or {"verify": {...}}',
  },
);

export const Schedule = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Label(),
  every: Type.String({ description: 'As given: a cron expression or words' }),
  cron: Type.String({ description: 'The five-field cron expression `every` reads as' }),
  timezone: Type.String({ description: 'IANA time zone' }),
  action: ScheduleAction,
  paused: Type.Boolean(),
  next_run_at: Type.Optional(Timestamp),
  last_run_at: Type.Optional(Timestamp),
  last_job_id: Type.Optional(Type.String({ format: 'uuid' })),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type Schedule = Static<typeof Schedule>;

export const ScheduleRun = Type.Object({
  due_at: Timestamp,
  ran_at: Timestamp,
  outcome: oneOf(SCHEDULE_RUN_OUTCOMES),
  job_id: Type.Optional(Type.String({ format: 'uuid' })),
  reason: Type.Optional(Type.String()),
  // Where the run's job stands now (while the job is kept: "Retention"), so a run reads as finished,
  // and how far, without a request per job.
  job_status: Type.Optional(oneOf(JOB_STATES)),
  counts: Type.Optional(Counts),
});
export type ScheduleRun = Static<typeof ScheduleRun>;

export const ScheduleWithRuns = Type.Object({
  ...Schedule.properties,
  runs: Type.Array(ScheduleRun, { description: 'The recent runs, newest first (at most 50)' }),
});
export type ScheduleWithRuns = Static<typeof ScheduleWithRuns>;

export const SchedulePage = Type.Object({
  schedules: Type.Array(Schedule),
  next_cursor: Type.Optional(Type.String()),
});
export type SchedulePage = Static<typeof SchedulePage>;

const Every = text(
  EVERY_MAX,
  SINGLE_LINE,
  1,
)({
  description:
    'A five-field cron expression ("30 2 * * *") or words: "every day at 02:00", "every monday at 9am", "every weekday at 18:30", "every 15 minutes", "every 2 hours", "every month on the 1st at 03:00"; at most every 5 minutes',
});

/** What a schedule runs, as a body gives it: each kind is the body of its own route, without dry_run. */
export const ScheduleActionBody = Type.Union(
  [
    Type.Object({ copy: ScheduledCopy }, { additionalProperties: false, required: ['copy'] }),
    Type.Object({ sync: ScheduledSync }, { additionalProperties: false, required: ['sync'] }),
    Type.Object({ verify: VerifyBody }, { additionalProperties: false, required: ['verify'] }),
  ],
  {
    description:
      '{"copy": <body of a bulk POST /v1/copy>}, {"sync": <body of POST /v1/sync>} or {"verify": <body of POST /v1/verify>}',
  },
);
export type ScheduleActionBody = Static<typeof ScheduleActionBody>;

const fields = {
  name: Label(),
  every: Every,
  timezone: Type.Optional(Timezone({ description: 'IANA time zone of `every`; default UTC' })),
  action: ScheduleActionBody,
  paused: Type.Optional(Type.Boolean()),
};

/** POST /v1/schedules. */
export const CreateScheduleBody = Type.Object(fields, { additionalProperties: false });
export type CreateScheduleBody = Static<typeof CreateScheduleBody>;

/** PATCH /v1/schedules/{id}: any of a schedule's fields, at least one. */
export const UpdateScheduleBody = Type.Object(
  {
    name: Type.Optional(fields.name),
    every: Type.Optional(fields.every),
    timezone: fields.timezone,
    action: Type.Optional(fields.action),
    paused: fields.paused,
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateScheduleBody = Static<typeof UpdateScheduleBody>;
