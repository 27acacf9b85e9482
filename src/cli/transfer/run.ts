// `ferry cp` and `ferry mv` when one side is a path on this computer (docs/cli.md, "Copying files to and
// from this computer"): plan, then move the files --transfers at a time, each streamed, with a progress
// line on a terminal and a summary at the end. A file that fails does not stop the others (unless the
// answer would be the same for every file: no key, no such location); the failures are listed at the
// end and the exit code is 6, as for a job with failures. A run that stops still ends with its summary
// and the name of every file that did not make it, with the stop's own exit code. A 429 is waited out
// by the client (src/cli/http.ts), not counted as a failure. `mv` removes a source only after its copy
// succeeded: a local file once uploaded, a remote file once downloaded (POST /remove, literal).
import { rmdir, unlink } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Context } from '../context.js';
import { CliError, EXIT, usageError } from '../exit.js';
import { ended, follow } from '../follow.js';
import { count, duration, size, table } from '../format.js';
import { isLocalPath, parsePlace } from '../targets.js';
import { download, upload } from './files.js';
import {
  expandHome,
  type Failure,
  type LocalPlan,
  localError,
  planDownload,
  planUpload,
  type Task,
} from './plan.js';
import { meter } from './progress.js';

export interface LocalOptions {
  transfers: number;
  dryRun: boolean;
  quiet: boolean;
  /** `mv`: remove each source once its copy succeeded. */
  move: boolean;
}

/** At most this many files move at once, whatever --transfers asks. */
export const MAX_TRANSFERS = 64;
/** Sources one POST /remove takes (docs/api.md, "Input"). */
const REMOVE_BATCH = 1000;

/** An answer that would be the same for every file: stop rather than fail each one. */
function stopsTheRun(err: CliError, task: Task): boolean {
  return (
    err.exitCode === EXIT.auth ||
    err.exitCode === EXIT.conflict ||
    (task.kind === 'upload' && err.exitCode === EXIT.notFound && !/on this computer/.test(err.message))
  );
}

const from = (t: Task) => (t.kind === 'upload' ? t.local : `${t.location}:${t.key}`);
const to = (t: Task) => (t.kind === 'upload' ? `${t.location}:${t.key}` : t.local);

/** Both places on the command line, told apart; refuses two local paths. */
export function hasLocalSide(src: string, dst: string): boolean {
  const srcLocal = isLocalPath(src);
  const dstLocal = isLocalPath(dst);
  if (srcLocal && dstLocal)
    throw usageError(
      `"${src}" and "${dst}" are both paths on this computer; ferry copies between this computer and a location (write the location as location:bucket/path), so use your shell's cp or mv here`,
    );
  return srcLocal || dstLocal;
}

function refusePattern(place: string): void {
  if (/[*?{]/.test(place.slice(place.indexOf(':') + 1)))
    throw usageError(
      `"${place}" holds a pattern character; with a path on this computer name one file, or a prefix ending in / for everything under it`,
    );
}

async function makePlan(ctx: Context, src: string, dst: string): Promise<LocalPlan> {
  if (isLocalPath(src)) {
    refusePattern(dst);
    return planUpload(src, parsePlace(dst));
  }
  refusePattern(src);
  return planDownload(ctx.api(), parsePlace(src), dst);
}

interface Summary {
  action: 'upload' | 'download';
  dry_run?: true;
  files: number;
  bytes: number;
  seconds?: number;
  resumed?: Array<{ path: string; from_byte: number }>;
  removed?: number;
  entries?: Array<{ from: string; to: string; size: number }>;
  failures: Array<{ path: string; error: string }>;
}

function dryRun(ctx: Context, plan: LocalPlan, action: Summary['action'], options: LocalOptions): void {
  const bytes = plan.tasks.reduce((sum, t) => sum + Math.max(0, t.size), 0);
  const summary: Summary = {
    action,
    dry_run: true,
    files: plan.tasks.length,
    bytes,
    entries: plan.tasks.map((t) => ({ from: from(t), to: to(t), size: t.size })),
    failures: plan.failures.map(({ path, error }) => ({ path, error })),
  };
  ctx.print(summary, () => {
    if (plan.tasks.length === 0) return `nothing to ${action}`;
    const listing = table(plan.tasks, [
      { header: 'SIZE', value: (t) => size(t.size), right: true },
      { header: 'FROM', value: from },
      { header: 'TO', value: to },
    ]);
    const then = options.move
      ? `, then remove them from ${action === 'upload' ? 'this computer' : 'the location'}`
      : '';
    return `${listing}\nwould ${action} ${count(plan.tasks.length, 'file')}, ${size(bytes)}${then}`;
  });
  if (plan.failures.length > 0) throw failed(plan.failures, plan.tasks.length + plan.failures.length);
}

function failed(failures: Failure[], of: number): CliError {
  const lines = failures.map((f) => `  ${f.error}`);
  return new CliError(
    `${failures.length} of ${count(of, 'file')} failed:\n${lines.join('\n')}`,
    EXIT.workFailed,
  );
}

/**
 * A folder's run that stopped (an answer that would be the same for every file): why, the files that
 * failed before, and the name of every file not moved, so that nothing missing goes unsaid. The exit
 * code is the stop's own.
 */
function stopped(stop: CliError, failures: Failure[], missed: Task[], verb: string, of: number): CliError {
  const before = failures.length === 0 ? '' : `${failures.map((f) => `  ${f.error}`).join('\n')}\n`;
  const names = missed.map((t) => `  ${from(t)}`).join('\n');
  return new CliError(
    `${stop.message}\nthe run stopped: ${failures.length + missed.length} of ${count(of, 'file')} not ${verb}:\n${before}${names}`,
    stop.exitCode,
    stop.forbidden,
  );
}

/** Removes the downloaded files from the location, in batches, following each removal to its end. */
async function removeRemote(ctx: Context, done: Task[], failures: Failure[]): Promise<number> {
  const api = ctx.api();
  let removed = 0;
  for (let i = 0; i < done.length; i += REMOVE_BATCH) {
    const batch = done.slice(i, i + REMOVE_BATCH);
    const paths = batch.map((t) => `${t.location}/${t.key}`);
    try {
      const path = paths.length === 1 && paths[0] !== undefined ? paths[0] : paths;
      const accepted = await api.send('POST', '/remove', { body: { path, literal: true } });
      const state = await ended(follow(api, 'transfer', accepted.id, 1000));
      if (state.status !== 'complete') throw new CliError(state.error ?? state.status, EXIT.workFailed);
      removed += batch.length;
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      for (const t of batch)
        failures.push({
          path: from(t),
          error: `${from(t)}: downloaded, but not removed from the location: ${why}`,
          exitCode: EXIT.workFailed,
        });
    }
  }
  return removed;
}

/** `ferry cp|mv SRC DST` with one side on this computer. */
export async function copyLocal(
  ctx: Context,
  src: string,
  dst: string,
  options: LocalOptions,
): Promise<void> {
  if (!Number.isInteger(options.transfers) || options.transfers < 1 || options.transfers > MAX_TRANSFERS)
    throw usageError(`--transfers must be a whole number from 1 to ${MAX_TRANSFERS}`);
  const action: Summary['action'] = isLocalPath(src) ? 'upload' : 'download';
  const plan = await makePlan(ctx, src, dst);
  if (options.dryRun) return dryRun(ctx, plan, action, options);

  const api = ctx.api();
  const totalBytes = plan.tasks.reduce((sum, t) => sum + Math.max(0, t.size), 0);
  const draw = process.stderr.isTTY === true && !ctx.json && !options.quiet;
  const progress = meter({ files: plan.tasks.length, bytes: totalBytes }, draw);
  const started = Date.now();
  const failures: Failure[] = [...plan.failures];
  const done: Task[] = [];
  /** Each task that ended, moved or failed: the rest of a stopped run were never moved. */
  const ended = new Set<Task>();
  const resumed: Summary['resumed'] = [];
  let bytes = 0;
  let removed = 0;
  let stop: CliError | undefined;
  let next = 0;

  const work = async () => {
    while (next < plan.tasks.length && !stop) {
      const task = plan.tasks[next++] as Task;
      progress.start(from(task));
      try {
        if (task.kind === 'upload') await upload(api, task, progress);
        else {
          const got = await download(api, task, progress);
          if (got.resumedAt > 0) resumed.push({ path: task.local, from_byte: got.resumedAt });
        }
        done.push(task);
        ended.add(task);
        bytes += Math.max(0, task.size);
        if (options.move && task.kind === 'upload') {
          try {
            await unlink(resolve(expandHome(task.local)));
            removed++;
          } catch (err) {
            const e = localError(err, task.local);
            failures.push({
              path: task.local,
              error: `uploaded, but not removed: ${e.message}`,
              exitCode: e.exitCode,
            });
          }
        }
      } catch (err) {
        const e = err instanceof CliError ? err : localError(err, from(task));
        if (!plan.folder) stop = e;
        else if (stopsTheRun(e, task)) stop = e;
        else {
          const named = e.message.includes(from(task)) ? e.message : `${from(task)}: ${e.message}`;
          failures.push({ path: from(task), error: named, exitCode: e.exitCode });
          ended.add(task);
        }
      } finally {
        progress.finish();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.transfers, plan.tasks.length) }, work));
  progress.end();
  // One file: its error is the command's, as for any other command.
  if (stop && !plan.folder) throw stop;
  const missed = stop ? plan.tasks.filter((t) => !ended.has(t)) : [];

  // A stopped run removes nothing from the location: what stopped it would refuse that too.
  if (options.move && action === 'download' && done.length > 0 && !stop)
    removed = await removeRemote(ctx, done, failures);
  if (options.move && action === 'upload')
    // Folders the move emptied go too (deepest first); one that still holds something stays.
    for (const dir of plan.dirs) await rmdir(dir).catch(() => {});

  const seconds = (Date.now() - started) / 1000;
  const summary: Summary = {
    action,
    files: done.length,
    bytes,
    seconds: Math.round(seconds * 1000) / 1000,
    ...(resumed.length > 0 ? { resumed } : {}),
    ...(options.move ? { removed } : {}),
    failures: [
      ...failures.map(({ path, error }) => ({ path, error })),
      ...missed.map((t) => ({ path: from(t), error: `not ${action}ed: the run stopped (${stop?.message})` })),
    ],
  };
  if (!options.quiet || ctx.json)
    ctx.print(summary, () => {
      const verb = action === 'upload' ? 'uploaded' : 'downloaded';
      const rate = seconds > 0 ? `, ${size(Math.round(bytes / seconds))}/s` : '';
      const parts = [`${verb} ${count(done.length, 'file')}, ${size(bytes)} in ${duration(seconds)}${rate}`];
      if (resumed.length > 0) parts.push(`${resumed.length} resumed`);
      if (options.move)
        parts.push(`${removed} removed from ${action === 'upload' ? 'this computer' : 'the location'}`);
      if (failures.length > 0) parts.push(`${failures.length} failed`);
      if (missed.length > 0) parts.push(`${missed.length} not ${verb}: the run stopped`);
      return parts.join('; ');
    });
  const of = plan.tasks.length + plan.failures.length;
  if (stop) throw stopped(stop, failures, missed, `${action}ed`, of);
  if (failures.length > 0) throw failed(failures, of);
}
