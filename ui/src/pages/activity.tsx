// Transfers and jobs (docs/api.md, "Polling") with live progress from the event stream: objects,
// bytes, rate and remaining time; a job's failures with retry; a job's report (docs/api.md, "Reports");
// the undo of a finished job that kept a backup (docs/api.md, "Undo")
// downloaded as CSV. `#activity/<job id>` opens one job (a schedule's run links there). Locations are
// named by their labels (../labels.ts).
import { useEffect, useState } from 'preact/hooks';
import type { Counts, Failures as FailurePage, Job, Transfer } from '../../../src/api/routes.js';
import { givenFromTo } from '../../../src/display.js';
import { hasFinished } from '../../../src/states.js';
import { api } from '../api.js';
import { getReport } from '../files.js';
import { bytes, duration, time, visibleName } from '../format.js';
import { labelOf, useLocationLabels } from '../labels.js';
import type { Live } from '../live.js';
import { can } from '../scopes.js';
import { Alert, message, ProgressBar } from './common.js';
import { ConfirmButton } from './confirm.js';
import { Table } from './table.js';

type Failure = FailurePage['failures'][number];

/** "1 object", "3 objects". */
export const objectsWord = (n: number) => `${n} object${n === 1 ? '' : 's'}`;

/** The objects a job is done with: copied, skipped, failed, and a sync's deleted (they are in `total`). */
export const settled = (c: Counts) => c.succeeded + c.skipped + c.failed + (c.deleted ?? 0);

/**
 * "3 of 4 objects (1 copied, 1 skipped, 0 failed, 1 deleted)": a sync's deletions too. A verify's
 * (docs/api.md, "Verify"): "4 of 4 objects compared (1 equal, 1 differ, 1 missing in destination, 1
 * missing in source, 0 failed)".
 */
export function countsWords(c: Counts, copied = 'copied'): string {
  if (c.equal !== undefined) {
    return `${settled(c)} of ${objectsWord(c.total)} compared (${c.equal} equal, ${c.differ ?? 0} differ, ${c.missing_in_destination ?? 0} missing in destination, ${c.missing_in_source ?? 0} missing in source, ${c.failed} failed)`;
  }
  const deleted = !c.deleted ? '' : `, ${c.deleted} deleted`;
  return `${settled(c)} of ${objectsWord(c.total)} (${c.succeeded} ${copied}, ${c.skipped} skipped, ${c.failed} failed${deleted})`;
}

/**
 * How a copy's written objects were proven (docs/api.md, "Verification"): " · 2 of 6 by size only", or
 * " · proven by checksum" once a copy or sync wrote any; nothing for other kinds.
 */
export function proofWords(kind: string, c: Counts): string {
  const sizeOnly = c.size_only ?? 0;
  if (sizeOnly > 0) return ` · ${sizeOnly} of ${c.succeeded} proven by size only`;
  return (kind === 'copy' || kind === 'sync') && c.succeeded > 0 ? ' · proven by checksum' : '';
}

/** A transfer's proof: " · proven by checksum (md5)" or " · proven by size only". */
function transferProofWords(t: Pick<Transfer, 'verified' | 'verified_by'>): string {
  if (t.verified === 'checksum') return ` · proven by checksum${t.verified_by ? ` (${t.verified_by})` : ''}`;
  return t.verified === 'size' ? ' · proven by size only' : '';
}

/**
 * Progress as a bar and a percentage; work that is complete is 100 %. Work that ended with failures is
 * not shown as a plain full bar: `failed` (red) or `partial` (amber), and the words say how many
 * objects failed.
 */
export function Bar({
  label,
  value,
  max,
  status,
  failed = 0,
}: {
  label: string;
  value: number;
  max: number;
  status: string;
  failed?: number;
}) {
  const pct = status === 'complete' ? 100 : max > 0 ? Math.min(100, Math.floor((value / max) * 100)) : 0;
  const tone = status === 'failed' || status === 'partial' || status === 'canceled' ? status : '';
  const words = failed > 0 ? `${pct}% · ${failed} failed` : tone ? `${pct}% · ${status}` : `${pct}%`;
  return <ProgressBar label={label} pct={pct} words={words} tone={tone} />;
}

/** The failed objects of a job or of a transfer over several objects, with retry. */
function Failures({
  kind,
  id,
  what,
  retryable,
  onRetried,
}: {
  kind: 'jobs' | 'transfers';
  id: string;
  what: string;
  retryable: boolean;
  onRetried: () => void;
}) {
  const [failures, setFailures] = useState<Failure[] | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  useEffect(() => {
    const request = { id, query: { limit: '100' } };
    (kind === 'jobs'
      ? api('GET', '/v1/jobs/{id}/failures', request)
      : api('GET', '/v1/transfers/{id}/failures', request)
    ).then(
      (r) => setFailures(r.failures),
      (err: unknown) => setError(message(err)),
    );
  }, [kind, id]);
  const retry = async () => {
    try {
      await (kind === 'jobs'
        ? api('POST', '/v1/jobs/{id}/retry', { id })
        : api('POST', '/v1/transfers/{id}/retry', { id }));
      onRetried();
    } catch (err) {
      setError(message(err));
    }
  };
  return (
    <div class="failures">
      <Alert error={error} />
      <Table
        caption={`Failed objects of this ${what}`}
        captionShown
        columns={[
          { name: 'Key', cell: (f) => f.key },
          { name: 'Error', cell: (f) => f.error },
          { name: 'Attempts', cell: (f) => f.attempts },
        ]}
        rows={failures ?? []}
        rowKey={(f) => f.key}
      />
      {retryable && can('transfer') && (
        <button type="button" onClick={retry}>
          Retry failed objects
        </button>
      )}
    </div>
  );
}

/** A job's source and destination, each as `<location label>:<path>`. */
export const jobName = (job: Job) =>
  visibleName(`${labelOf(job.from.id)}:${job.from.path} → ${labelOf(job.to.id)}:${job.to.path}`);

/**
 * A job the console offers to undo (docs/api.md, "Undo"): finished, not an undo itself, and run with a
 * backup, so what it deleted or overwrote can come back. The server decides; a 409 is shown.
 */
const UNDO_QUESTION =
  'Undo this? What it created is removed and what it deleted or overwrote comes back from its backup; an object changed since is left alone.';

const undoable = (job: Job) =>
  job.kind !== 'undo' && job.backup_to !== undefined && hasFinished('job', job.status);

function JobRow({ job, live }: { job: Job; live: Live }) {
  const [open, setOpen] = useState(false);
  // Why a cancel was refused (the job ended meanwhile: 409).
  const [error, setError] = useState<string | undefined>(undefined);
  const c = job.counts;
  const rate = live.rate(job.job_id);
  const eta = rate && rate.objectsPerSecond > 0 ? duration(c.pending / rate.objectsPerSecond) : '—';
  const name = jobName(job);
  return (
    <li class="job">
      <div class="head">
        <strong>{name}</strong> <span class="small">{job.kind}</span>{' '}
        <span class={`badge ${job.status}`}>{job.status}</span>
      </div>
      <Bar
        label={`Progress of ${name}`}
        value={settled(c)}
        max={c.total}
        status={job.status}
        failed={c.failed}
      />
      <div class="small">
        {countsWords(c)}
        {proofWords(job.kind, c)} · {bytes(job.bytes_done)} · {rate ? `${bytes(rate.bytesPerSecond)}/s` : '—'}{' '}
        · ETA {hasFinished('job', job.status) ? '—' : eta} · started {time(job.created_at)}
      </div>
      {job.error && <p class="alert">{job.error}</p>}
      {c.failed > 0 && (
        <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? 'Hide failures' : `Show ${c.failed} failure${c.failed === 1 ? '' : 's'}`}
        </button>
      )}
      {open && (
        <Failures
          kind="jobs"
          id={job.job_id}
          what="job"
          retryable={job.status === 'partial' || job.status === 'failed'}
          onRetried={() => setOpen(false)}
        />
      )}
      <Alert error={error} />
      <button
        type="button"
        aria-label={`Download report of ${name}`}
        onClick={() =>
          void getReport(`/v1/jobs/${job.job_id}/report`, `job-${job.job_id}-report.csv`).catch(
            (err: unknown) => setError(message(err)),
          )
        }
      >
        Download report
      </button>
      {undoable(job) && can('transfer') && can('remove') && (
        <ConfirmButton
          label={`Undo ${name}`}
          question={UNDO_QUESTION}
          onConfirm={() =>
            void api('POST', '/v1/jobs/{id}/undo', { id: job.job_id }).catch((err: unknown) =>
              setError(message(err)),
            )
          }
        >
          Undo
        </ConfirmButton>
      )}
      {!hasFinished('job', job.status) && can('transfer') && (
        <ConfirmButton
          label={`Cancel ${name}`}
          question="Cancel this job? Objects already copied stay."
          onConfirm={() =>
            void api('POST', '/v1/jobs/{id}/cancel', { id: job.job_id }).catch((err: unknown) =>
              setError(message(err)),
            )
          }
        >
          Cancel
        </ConfirmButton>
      )}
    </li>
  );
}

function TransferRow({ t, live, named }: { t: Transfer; live: Live; named: (text: string) => string }) {
  const [open, setOpen] = useState(false);
  // Why an undo was refused (409).
  const [error, setError] = useState<string | undefined>(undefined);
  const rate = live.rate(t.id);
  const left =
    rate && rate.bytesPerSecond > 0 && t.bytes_total !== undefined
      ? duration((t.bytes_total - t.bytes_done) / rate.bytesPerSecond)
      : '—';
  const c = t.counts;
  // Over several objects the bar counts objects, as a job's does; a single transfer's counts bytes.
  const max = c ? c.total : (t.bytes_total ?? (t.status === 'complete' ? 1 : 0));
  const value = c
    ? settled(c)
    : t.bytes_total === undefined
      ? t.status === 'complete'
        ? 1
        : 0
      : t.bytes_done;
  // Transfers accepted before ferry kept from and to show the kind and id, as they did.
  const name =
    t.from === undefined ? `${t.kind} ${t.id.slice(0, 8)}` : visibleName(named(givenFromTo(t.from, t.to)));
  return (
    <li class="job">
      <div class="head">
        <strong>{name}</strong> <span class="small">{t.kind}</span>{' '}
        <span class={`badge ${t.status}`}>{t.status}</span>
      </div>
      <Bar label={`Progress of ${name}`} value={value} max={max} status={t.status} failed={c?.failed ?? 0} />
      <div class="small">
        {c && <>{countsWords(c, 'done')} · </>}
        {bytes(t.bytes_done)}
        {c ? '' : ` of ${bytes(t.bytes_total)}`} · {rate ? `${bytes(rate.bytesPerSecond)}/s` : '—'} · ETA{' '}
        {t.status === 'running' ? left : '—'} · {time(t.created_at)}
        {transferProofWords(t)}
      </div>
      {t.error && <p class="alert">{t.error}</p>}
      {c && c.failed > 0 && (
        <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? 'Hide failures' : `Show ${c.failed} failure${c.failed === 1 ? '' : 's'}`}
        </button>
      )}
      {open && (
        <Failures
          kind="transfers"
          id={t.id}
          what="transfer"
          retryable={t.status === 'failed'}
          onRetried={() => setOpen(false)}
        />
      )}
      <Alert error={error} />
      {t.backup_to !== undefined &&
        hasFinished('transfer', t.status) &&
        can('remove') &&
        (t.kind === 'remove' || can('transfer')) && (
          <ConfirmButton
            label={`Undo ${name}`}
            question={UNDO_QUESTION}
            onConfirm={() =>
              void api('POST', '/v1/jobs/{id}/undo', { id: t.id }).catch((err: unknown) =>
                setError(message(err)),
              )
            }
          >
            Undo
          </ConfirmButton>
        )}
    </li>
  );
}

/**
 * One job (`#activity/<id>`): what GET /v1/jobs/{id} said, then what the event stream says of it, with
 * everything its row in the list has (progress, failures, report, cancel).
 */
function JobDetail({ id, live }: { id: string; live: Live }) {
  useLocationLabels();
  const [polled, setPolled] = useState<Job | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  useEffect(() => {
    setPolled(undefined);
    setError(undefined);
    api('GET', '/v1/jobs/{id}', { id }).then(setPolled, (err: unknown) => setError(message(err)));
  }, [id]);
  const streamed = live.jobs.get(id);
  const job = streamed && (!polled || streamed.updated_at >= polled.updated_at) ? streamed : polled;
  return (
    <section aria-labelledby="h-job">
      <p>
        <a href="#activity">All transfers and jobs</a>
      </p>
      <h1 id="h-job">Job {id.slice(0, 8)}</h1>
      <Alert error={error} />
      {job ? (
        <>
          <p class="small">
            {job.job_id}
            {job.schedule_id ? (
              <>
                {' '}
                · started by <a href={`#schedules/${job.schedule_id}`}>a schedule</a>
              </>
            ) : null}{' '}
            · created {time(job.created_at)}
            {job.finished_at ? ` · finished ${time(job.finished_at)}` : ''}
          </p>
          <ul class="jobs">
            <JobRow job={job} live={live} />
          </ul>
        </>
      ) : error ? null : (
        <p>Loading…</p>
      )}
    </section>
  );
}

export function Activity({ live, job }: { live: Live; job?: string | undefined }) {
  return job ? <JobDetail id={job} live={live} /> : <ActivityList live={live} />;
}

function ActivityList({ live }: { live: Live }) {
  const named = useLocationLabels();
  const [error, setError] = useState<string | undefined>(undefined);
  // The newest of each from the API once; the stream keeps them current from then on.
  useEffect(() => {
    Promise.all([
      api('GET', '/v1/jobs', { query: { limit: '50' } }),
      api('GET', '/v1/transfers', { query: { limit: '50' } }),
    ]).then(
      ([j, t]) => {
        for (const job of j.jobs) if (!live.jobs.has(job.job_id)) live.jobs.set(job.job_id, job);
        for (const tr of t.transfers) if (!live.transfers.has(tr.id)) live.transfers.set(tr.id, tr);
        setError('');
      },
      (err: unknown) => setError(message(err)),
    );
  }, [live]);
  const jobs = [...live.jobs.values()].sort((a, b) => b.created_at.localeCompare(a.created_at));
  const transfers = [...live.transfers.values()].sort((a, b) => b.created_at.localeCompare(a.created_at));
  return (
    <section aria-labelledby="h-activity">
      <h1 id="h-activity">Transfers and jobs</h1>
      <Alert error={error || undefined} />
      <h2>Jobs</h2>
      {jobs.length === 0 ? <p>No jobs yet.</p> : null}
      <ul class="jobs">
        {jobs.map((j) => (
          <JobRow key={j.job_id} job={j} live={live} />
        ))}
      </ul>
      <h2>Transfers</h2>
      {transfers.length === 0 ? <p>No transfers yet.</p> : null}
      <ul class="jobs">
        {transfers.map((t) => (
          <TransferRow key={t.id} t={t} live={live} named={named} />
        ))}
      </ul>
    </section>
  );
}
