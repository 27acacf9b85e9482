// The Schedules page (docs/console.md, "Schedules"; docs/api.md, "Schedules"): the workspace's
// schedules, each with where it goes from and to, with pause and resume, run now and delete; a new
// schedule's form (its action a copy, a sync or a verify, with the Sync page's fields); a sync's verify
// (the same folders compared now, docs/api.md "Verify"); and one schedule with its
// recent runs, each run with its job's state (running, finished, failed) and a link that opens the job.
import { useEffect, useState } from 'preact/hooks';
import type { Schedule } from '../../../src/api/routes.js';
import { givenText, scheduleRunText } from '../../../src/display.js';
import { api } from '../api.js';
import { time, timeIn, visibleName } from '../format.js';
import { useLocationLabels } from '../labels.js';
import { can } from '../scopes.js';
import { Alert, message, Needs, Notice, useLoad } from './common.js';
import { ConfirmButton } from './confirm.js';
import { withLocations } from './sync.js';
import { actions, Table } from './table.js';
import {
  type ActionBodies,
  type ActionKind,
  EMPTY_TRANSFER,
  type Loc,
  TransferFields,
  type TransferValues,
  transferBody,
} from './transfer-fields.js';

/**
 * A schedule's action as it was given, and checked against POST /v1/schedules's (docs/api.md,
 * "Schedules"): `{copy: …}`, `{sync: …}` or `{verify: …}`; the answer's schema leaves it open.
 */
type GivenAction = Partial<{ [K in ActionKind]: ActionBodies[K] }>;

/** The browser's own zone first, then UTC, then every other zone the browser knows. */
export function timezones(): string[] {
  const own = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return [...new Set([own, 'UTC', ...Intl.supportedValuesOf('timeZone')])];
}

const jobLink = (id: string | undefined) =>
  id ? (
    <a href={`#activity/${id}`} title={`job ${id}`}>
      job {id.slice(0, 8)}
    </a>
  ) : null;

const actionOf = (s: Schedule) => Object.keys(s.action)[0] ?? '';

/** The action's body: its `from`, `to` and options (docs/api.md, "Schedules"). */
const bodyOf = (s: Schedule) => {
  const action = s.action as GivenAction;
  return action.copy ?? action.sync ?? action.verify;
};

/** Where a schedule copies or syncs from and to, locations by their labels. */
function fromTo(s: Schedule, named: (text: string) => string): { from: string; to: string } {
  const body = bodyOf(s);
  const side = (v: unknown) => visibleName(named(givenText(v as Parameters<typeof givenText>[0]))) || '—';
  return { from: side(body?.from), to: side(body?.to) };
}

/** A sync's deletions in words, or undefined (a copy, or a sync that deletes nothing). */
function deletes(s: Schedule): string | undefined {
  const sync = (s.action as GivenAction).sync;
  if (sync?.delete !== true) return undefined;
  return `deletes at the destination what the source lacks${typeof sync.max_delete === 'number' ? ` (at most ${sync.max_delete})` : ''}`;
}

/** Pause or resume, run now, delete: the same buttons in the list and on a schedule's own page. */
function ScheduleActions({
  s,
  onChanged,
  onError,
  onRun,
  onDeleted = onChanged,
}: {
  s: Schedule;
  onChanged: () => void;
  /** After a delete (the schedule's own page leaves for the list). */
  onDeleted?: () => void;
  onError: (e: string | undefined) => void;
  onRun: (text: string) => void;
}) {
  const name = visibleName(s.name);
  const act = async (fn: () => Promise<unknown>, then = onChanged) => {
    try {
      onError(undefined);
      await fn();
      then();
    } catch (err) {
      onError(message(err));
    }
  };
  // A sync's folders compared now (docs/api.md, "Verify"): a read, whatever the key may change.
  const sync = (s.action as GivenAction).sync;
  const verify =
    sync && can('read') ? (
      <button
        type="button"
        aria-label={`Verify ${name}`}
        onClick={() =>
          void act(async () => {
            const r = await api('POST', '/v1/verify', {
              body: {
                from: sync.from,
                to: sync.to,
                ...(sync.filter === undefined ? {} : { filter: sync.filter }),
              },
            });
            onRun(`Verify of ${name} started: job ${r.job_id}.`);
          })
        }
      >
        Verify
      </button>
    ) : null;
  // Every change to a schedule, and its run, needs the transfer scope.
  if (!can('transfer')) return verify;
  return (
    <>
      {verify}
      <button
        type="button"
        aria-label={`${s.paused ? 'Resume' : 'Pause'} ${name}`}
        onClick={() =>
          void act(() => api('PATCH', '/v1/schedules/{id}', { id: s.id, body: { paused: !s.paused } }))
        }
      >
        {s.paused ? 'Resume' : 'Pause'}
      </button>
      <button
        type="button"
        aria-label={`Run now: ${name}`}
        onClick={() =>
          void act(async () => {
            const r = await api('POST', '/v1/schedules/{id}/run', { id: s.id });
            onRun(`${name} started: job ${r.job_id}.`);
          })
        }
      >
        Run now
      </button>
      <ConfirmButton
        label={`Delete ${name}`}
        question={`Delete the schedule ${name}? Jobs it started stay.`}
        confirm={{ text: 'Delete', label: `Yes, delete ${name}` }}
        keep={{ text: 'Keep', label: `Keep ${name}` }}
        onConfirm={() => void act(() => api('DELETE', '/v1/schedules/{id}', { id: s.id }), onDeleted)}
      >
        Delete
      </ConfirmButton>
    </>
  );
}

/** The form of a new schedule. */
function ScheduleForm({
  locations,
  loading,
  onCreated,
}: {
  locations: Loc[];
  /** The locations are still being read: nothing is sent until the form can name one (withLocations). */
  loading: boolean;
  onCreated: (s: Schedule) => void;
}) {
  const zones = timezones();
  const [name, setName] = useState('');
  const [every, setEvery] = useState('');
  const [timezone, setTimezone] = useState(zones[0] ?? 'UTC');
  const [kind, setKind] = useState<ActionKind>('sync');
  const [typed, setTyped] = useState<TransferValues>(EMPTY_TRANSFER);
  const values = withLocations(typed, locations);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (busy) return;
    setBusy(true);
    try {
      setError(undefined);
      const action =
        kind === 'copy'
          ? { copy: transferBody(values, 'copy') }
          : kind === 'sync'
            ? { sync: transferBody(values, 'sync') }
            : { verify: transferBody(values, 'verify') };
      const s = await api('POST', '/v1/schedules', { body: { name, every, timezone, action } });
      setName('');
      setEvery('');
      onCreated(s);
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="panel" aria-labelledby="h-new-schedule">
      <h2 id="h-new-schedule">New schedule</h2>
      <Alert error={error} />
      <form class="grid" onSubmit={(e) => void submit(e)}>
        <label for="schedule-name">Name</label>
        <input
          id="schedule-name"
          required
          maxLength={200}
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
        />
        <label for="schedule-every">Every (words or cron: "every day at 02:00", "*/15 * * * *")</label>
        <input
          id="schedule-every"
          required
          maxLength={200}
          value={every}
          placeholder="every day at 02:00"
          onInput={(e) => setEvery(e.currentTarget.value)}
        />
        <label for="schedule-timezone">Time zone</label>
        <select id="schedule-timezone" value={timezone} onChange={(e) => setTimezone(e.currentTarget.value)}>
          {zones.map((z) => (
            <option key={z} value={z}>
              {z}
            </option>
          ))}
        </select>
        <label for="schedule-action">Action</label>
        <select
          id="schedule-action"
          value={kind}
          onChange={(e) => setKind(e.currentTarget.value as ActionKind)}
        >
          <option value="sync">Sync</option>
          <option value="copy">Copy</option>
          <option value="verify">Verify (compare, change nothing)</option>
        </select>
        <TransferFields id="schedule" kind={kind} locations={locations} values={values} onChange={setTyped} />
        <button type="submit" disabled={busy || loading}>
          Create schedule
        </button>
      </form>
    </section>
  );
}

/** One schedule with its recent runs, read again every few seconds while it is shown. */
export function ScheduleDetail({ id }: { id: string }) {
  const named = useLocationLabels();
  // The schedule with its runs, and its jobs (newest first, as many as runs are kept) for their state.
  const loaded = useLoad(async () => {
    const [schedule, jobs] = await Promise.all([
      api('GET', '/v1/schedules/{id}', { id }),
      api('GET', '/v1/jobs', { query: { schedule_id: id, limit: '50' } }),
    ]);
    return { ...schedule, jobs: new Map(jobs.jobs.map((j) => [j.job_id, j])) };
  }, [id]);
  const [error, setError] = useState<string | undefined>(undefined);
  const [started, setStarted] = useState<string | undefined>(undefined);
  const { reload } = loaded;
  useEffect(() => {
    const timer = setInterval(reload, 3000);
    return () => clearInterval(timer);
  }, [reload]);
  const s = loaded.data;
  const runs = s?.runs ?? [];
  return (
    <section aria-labelledby="h-schedule">
      <p>
        <a href="#schedules">All schedules</a>
      </p>
      <h1 id="h-schedule">{s ? visibleName(s.name) : 'Schedule'}</h1>
      <Alert error={loaded.error} />
      <Alert error={error} />
      {started && <Notice>{started}</Notice>}
      {s && (
        <>
          <dl class="health">
            <dt>Every</dt>
            <dd>{s.every}</dd>
            <dt>Time zone</dt>
            <dd>{s.timezone}</dd>
            <dt>Action</dt>
            <dd>
              {actionOf(s)}
              {deletes(s) ? `; ${deletes(s)}` : ''}
            </dd>
            <dt>From</dt>
            <dd>{fromTo(s, named).from}</dd>
            <dt>To</dt>
            <dd>{fromTo(s, named).to}</dd>
            <dt>State</dt>
            <dd>{s.paused ? 'paused' : 'active'}</dd>
            <dt>Next run</dt>
            <dd>{s.paused ? '— (paused)' : timeIn(s.next_run_at, s.timezone)}</dd>
            <dt>Last run</dt>
            <dd>
              {time(s.last_run_at)} {jobLink(s.last_job_id)}
            </dd>
          </dl>
          <ScheduleActions s={s} onChanged={reload} onError={setError} onRun={setStarted} />
          <Table
            caption="Recent runs"
            captionShown
            columns={[
              { name: 'Ran', cell: (r) => time(r.ran_at) },
              { name: 'Due', cell: (r) => time(r.due_at) },
              {
                name: 'Outcome',
                cell: (r) => {
                  const shown = scheduleRunText(r.outcome, r.job_id ? s.jobs.get(r.job_id) : undefined);
                  return (
                    <>
                      <span class={`badge ${shown.tone}`}>{shown.words}</span>
                      {r.reason ? ` ${r.reason}` : ''}
                    </>
                  );
                },
              },
              { name: 'Job', cell: (r) => jobLink(r.job_id) },
            ]}
            rows={runs}
            rowKey={(r) => `${r.due_at} ${r.ran_at}`}
          />
          {runs.length === 0 && <p>No runs yet.</p>}
        </>
      )}
    </section>
  );
}

export function Schedules() {
  const named = useLocationLabels();
  const locations = useLoad(() => api('GET', '/v1/locations'), []);
  const listed = useLoad(() => api('GET', '/v1/schedules', { query: { limit: '100' } }), []);
  const [error, setError] = useState<string | undefined>(undefined);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  return (
    <section aria-labelledby="h-schedules">
      <h1 id="h-schedules">Schedules</h1>
      <Alert error={listed.error} />
      <Alert error={error} />
      {notice && <Notice>{notice}</Notice>}
      <Table
        caption="The workspace's schedules"
        columns={[
          {
            name: 'Name, from → to',
            cell: (s) => (
              <>
                <a href={`#schedules/${s.id}`}>{visibleName(s.name)}</a>
                <div class="small from-to">
                  {actionOf(s)} {fromTo(s, named).from} → {fromTo(s, named).to}
                  {deletes(s) ? `; ${deletes(s)}` : ''}
                </div>
              </>
            ),
          },
          { name: 'Every', cell: (s) => s.every },
          { name: 'Time zone', cell: (s) => s.timezone },
          { name: 'Next run', cell: (s) => (s.paused ? '—' : timeIn(s.next_run_at, s.timezone)) },
          {
            name: 'Last run',
            cell: (s) => (
              <>
                {s.last_run_at ? time(s.last_run_at) : '—'} {jobLink(s.last_job_id)}
              </>
            ),
          },
          { name: 'Paused', cell: (s) => (s.paused ? 'paused' : 'no') },
          actions<Schedule>((s) => (
            <ScheduleActions s={s} onChanged={listed.reload} onError={setError} onRun={setNotice} />
          )),
        ]}
        rows={listed.data?.schedules ?? []}
        rowKey={(s) => s.id}
      />
      {listed.data && listed.data.schedules.length === 0 && <p>No schedules yet.</p>}
      <Alert error={locations.error} />
      {can('transfer') ? (
        <ScheduleForm
          locations={locations.data ?? []}
          loading={locations.data === undefined}
          onCreated={(s) => {
            setNotice(
              `Schedule ${visibleName(s.name)} created: ${s.paused ? 'paused' : `next run ${timeIn(s.next_run_at, s.timezone)}`}.`,
            );
            listed.reload();
          }}
        />
      ) : (
        <Needs scope="transfer" what="to create, pause, resume, run or delete a schedule" />
      )}
    </section>
  );
}
