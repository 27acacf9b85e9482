// A schedule as the API answers it (docs/api.md, "Schedules"): one TypeBox schema, from which come the
// routes' response schemas (so /openapi.json), the server's view type and the CLI's, imported type-only.
import { type Static, Type } from 'typebox';
import { JOB_STATES, SCHEDULE_RUN_OUTCOMES } from '../states.js';
import { Label, oneOf, Timestamp } from './text.js';
import { Counts } from './transfers.js';

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
