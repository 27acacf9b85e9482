// The Sync page (docs/console.md, "Sync"): a sync's form (TransferFields), previewed as a plan that
// binds (docs/api.md, "Plans") and run as it was shown, or run at once; the job's progress after.
import { useEffect, useState } from 'preact/hooks';
import type { Job, Plan, PlanEntry } from '../../../src/api/routes.js';
import { hasFinished } from '../../../src/states.js';
import { api } from '../api.js';
import { bytes, time, visibleName } from '../format.js';
import type { Live } from '../live.js';
import { can } from '../scopes.js';
import { Bar, countsWords, settled } from './activity.js';
import { Alert, message, Needs, useLoad } from './common.js';
import { More, Table, usePages } from './table.js';
import {
  EMPTY_TRANSFER,
  type Loc,
  TransferFields,
  type TransferValues,
  transferBody,
} from './transfer-fields.js';

/** The form's values with the first location where none was picked yet (the select shows it). */
export function withLocations(v: TransferValues, locations: Loc[]): TransferValues {
  const first = locations[0]?.id ?? '';
  return { ...v, fromLocation: v.fromLocation || first, toLocation: v.toLocation || first };
}

/**
 * A job's progress as Activity shows it (the one Bar): what the event stream says of it, or what
 * GET /v1/jobs/{id} said, whichever is newer; asked every second until the job has ended.
 */
export function JobProgress({ jobId, live }: { jobId: string; live: Live }) {
  const [polled, setPolled] = useState<Job | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const streamed = live.jobs.get(jobId);
  const job = streamed && (!polled || streamed.updated_at >= polled.updated_at) ? streamed : polled;
  const ended = job !== undefined && hasFinished('job', job.status);
  useEffect(() => {
    if (ended) return;
    let stop = false;
    const ask = () =>
      api('GET', '/v1/jobs/{id}', { id: jobId }).then(
        (j) => {
          if (!stop) setPolled(j);
        },
        (err: unknown) => setError(message(err)),
      );
    void ask();
    const timer = setInterval(ask, 1000);
    return () => {
      stop = true;
      clearInterval(timer);
    };
  }, [jobId, ended]);
  if (!job) return <Alert error={error} />;
  const c = job.counts;
  return (
    <div class="job">
      <div class="head">
        Job {jobId} <span class={`badge ${job.status}`}>{job.status}</span>
      </div>
      <Bar
        label={`Progress of job ${jobId}`}
        value={settled(c)}
        max={c.total}
        status={job.status}
        failed={c.failed}
      />
      <p class="small">
        {countsWords(c)} · {bytes(job.bytes_done)}
      </p>
      {job.error && <p class="alert">{job.error}</p>}
      <Alert error={error} />
      <a href={`#activity/${jobId}`}>Open this job</a> · <a href="#activity">All transfers and jobs</a>
    </div>
  );
}

/** What a plan entry names: a copy's key, a remove's path or a move's source. */
const entryKey = (e: PlanEntry) => e.key ?? e.path ?? e.from ?? '';
const entryAction = (e: PlanEntry) => e.action;

/** A plan: its counts, its expiry, its entries page by page, and Run this plan. */
export function PlanView({ plan, onRun }: { plan: Plan; onRun: (jobId: string) => void }) {
  // The first page came with the plan; the next ones are read from it.
  const pages = usePages(
    async (cursor) => {
      const page =
        cursor === undefined
          ? plan
          : await api('GET', '/v1/plans/{id}', { id: plan.plan_id, query: { cursor } });
      return { items: page.entries, next_cursor: page.next_cursor };
    },
    [plan],
  );
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const work = async (fn: () => Promise<void>) => {
    if (busy) return;
    setBusy(true);
    try {
      setError(undefined);
      await fn();
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(false);
    }
  };
  const run = () =>
    work(async () => {
      const r = await api('POST', '/v1/plans/{id}/run', { id: plan.plan_id });
      // A sync's plan runs as a job (docs/api.md, "Plans"); a move's or a remove's as one transfer.
      if ('job_id' in r) onRun(r.job_id);
    });
  return (
    <section class="panel" aria-labelledby="h-plan">
      <h2 id="h-plan" tabIndex={-1}>
        The plan
      </h2>
      <p>
        Nothing has changed yet. Run this plan to do exactly this; an object that changes before then is left
        alone and counted as skipped. The plan expires at <strong>{time(plan.expires_at)}</strong>.
      </p>
      <dl class="counts">
        {Object.entries(plan.counts).map(([k, n]) => (
          <div key={k}>
            <dt>{k.replace(/_/g, ' ')}</dt>
            <dd>{typeof n === 'number' ? n : JSON.stringify(n)}</dd>
          </div>
        ))}
      </dl>
      <Table
        caption="Objects in the plan"
        captionShown
        columns={[
          { name: 'Key', cell: (e) => visibleName(entryKey(e)) },
          { name: 'Action', cell: entryAction },
          { name: 'Size', cell: (e) => (typeof e.size === 'number' ? bytes(e.size) : '') },
        ]}
        rows={pages.rows}
        rowKey={(e, i) => `${entryKey(e)} ${i}`}
      />
      <Alert error={error ?? pages.error} />
      <More pages={{ ...pages, busy: busy || pages.busy }}>Show more</More>
      {/* A sync's plan runs with the transfer scope (docs/api.md, "Scopes"). */}
      {can('transfer') ? (
        <button type="button" disabled={busy || pages.busy} onClick={run}>
          Run this plan
        </button>
      ) : (
        <Needs scope="transfer" what="to run a plan" />
      )}
    </section>
  );
}

export function Sync({ live }: { live: Live }) {
  const locations = useLoad(() => api('GET', '/v1/locations'), []);
  const [typed, setTyped] = useState(EMPTY_TRANSFER);
  const values = withLocations(typed, locations.data ?? []);
  const [plan, setPlan] = useState<Plan | undefined>(undefined);
  const [jobId, setJobId] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const submit = async (e: SubmitEvent) => {
    e.preventDefault();
    if (busy) return;
    const preview = (e.submitter as HTMLButtonElement | null)?.value !== 'now';
    setBusy(true);
    try {
      setError(undefined);
      const body = transferBody(values, 'sync');
      if (preview) {
        setJobId(undefined);
        setPlan(await api('POST', '/v1/sync', { body: { ...body, dry_run: true } }));
      } else {
        setPlan(undefined);
        setJobId((await api('POST', '/v1/sync', { body })).job_id);
      }
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="h-sync">
      <h1 id="h-sync">Sync</h1>
      <p class="help">
        Makes the destination folder hold what the source folder holds: an object is copied when it is missing
        or different; with delete, what the source lacks is removed from the destination. Preview shows what
        would happen, and runs exactly that.
      </p>
      <Alert error={locations.error} />
      {!can('transfer') && <Needs scope="transfer" what="to run a sync; a preview needs only read" />}
      <form class="grid" onSubmit={(e) => void submit(e as unknown as SubmitEvent)}>
        <TransferFields
          id="sync"
          kind="sync"
          locations={locations.data ?? []}
          values={values}
          onChange={setTyped}
        />
        <div class="buttons">
          {/* Not before the locations have loaded: the form's location is the first one (withLocations). */}
          <button type="submit" value="preview" disabled={busy || locations.data === undefined}>
            Preview
          </button>
          {can('transfer') && (
            <button type="submit" value="now" disabled={busy || locations.data === undefined}>
              Sync now
            </button>
          )}
        </div>
      </form>
      <Alert error={error} />
      {plan && !jobId && <PlanView key={plan.plan_id} plan={plan} onRun={setJobId} />}
      {jobId && <JobProgress jobId={jobId} live={live} />}
    </section>
  );
}
