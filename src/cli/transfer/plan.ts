// What `ferry cp` and `mv` with a path on this computer will do, worked out before any byte moves
// (docs/cli.md, "Copying files to and from this computer"): each file's source, destination and size.
// An upload walks the local file or folder; a download asks the server (HEAD /v1/files for one file,
// POST /v1/list with recurse for a prefix ending in `/`, docs/api.md "Listing objects"). The plan is what
// --dry-run prints and what the run works through.
import type { Dirent } from 'node:fs';
import { opendir, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, join, resolve, sep } from 'node:path';
import { CliError, EXIT, usageError } from '../exit.js';
import type { Api } from '../http.js';
import { locationRef, type Place } from '../targets.js';

export interface Upload {
  kind: 'upload';
  /** The file on this computer, as the user would write it. */
  local: string;
  location: string;
  /** The path in the location (bucket first), no leading `/`. */
  key: string;
  size: number;
}

export interface Download {
  kind: 'download';
  location: string;
  key: string;
  local: string;
  /** -1 when the server did not say. */
  size: number;
}

export type Task = Upload | Download;

/** One file that could not be planned or moved, with why in words. */
export interface Failure {
  path: string;
  error: string;
  exitCode: number;
}

export interface LocalPlan {
  tasks: Task[];
  /** A folder or a prefix (many files, failures listed at the end) rather than one file. */
  folder: boolean;
  /** Upload: the local folders walked, deepest first (emptied and removed by `mv`). */
  dirs: string[];
  failures: Failure[];
}

/** `~` and `~/…` are the home folder, as a shell would have expanded them. */
export function expandHome(path: string): string {
  if (path === '~') return homedir();
  if (path.startsWith('~/')) return join(homedir(), path.slice(2));
  return path;
}

/** `/v1/files/<location>/<path>` with every part URL-encoded (docs/api.md, "Files through ferry"). */
export function filesPath(location: string, key: string): string {
  return `/v1/files/${encodeURIComponent(location)}/${key.split('/').map(encodeURIComponent).join('/')}`;
}

/** A path without leading `/` or repeated `/`, keeping a trailing `/` (which marks a prefix). */
function clean(path: string): string {
  return path.replace(/\/{2,}/g, '/').replace(/^\//, '');
}

function under(prefix: string, rel: string): string {
  const base = prefix.replace(/\/$/, '');
  return base === '' ? rel : `${base}/${rel}`;
}

/** A local error as words and an exit code: what went wrong with which path. */
export function localError(err: unknown, path: string): CliError {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new CliError(`no file or folder ${path} on this computer`, EXIT.notFound);
  if (code === 'EACCES' || code === 'EPERM')
    return new CliError(`permission denied: ${path} on this computer`, EXIT.failure);
  if (code === 'EISDIR') return usageError(`${path} is a folder, where a file is needed`);
  if (code === 'ENOTDIR') return usageError(`${path} is (or is inside) a file, where a folder is needed`);
  if (code === 'ENOSPC') return new CliError(`no space left on this computer for ${path}`, EXIT.failure);
  if (err instanceof CliError) return err;
  return new CliError(`${path}: ${(err as Error).message}`, EXIT.failure);
}

function failureOf(path: string, err: unknown): Failure {
  const e = localError(err, path);
  return { path, error: e.message, exitCode: e.exitCode };
}

/**
 * Every file under `root` (as `shown/rel`), in name order, walked without recursion so depth costs no
 * stack. A symbolic link to a file is followed; one to a folder is not (it could loop) and is listed
 * as a failure, as is a folder that cannot be read.
 */
async function walk(
  root: string,
  shown: string,
  plan: LocalPlan,
): Promise<Array<{ path: string; rel: string; size: number }>> {
  const files: Array<{ path: string; rel: string; size: number }> = [];
  const stack = [''];
  const dirs: string[] = [];
  while (stack.length > 0) {
    const rel = stack.pop() as string;
    const dir = rel === '' ? root : join(root, ...rel.split('/'));
    const show = rel === '' ? shown : `${shown.replace(/\/$/, '')}/${rel}`;
    const entries: Dirent[] = [];
    try {
      for await (const entry of await opendir(dir)) entries.push(entry);
    } catch (err) {
      plan.failures.push(failureOf(show, err));
      continue;
    }
    dirs.push(dir);
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subfolders: string[] = [];
    for (const entry of entries) {
      const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
      const childShow = `${shown.replace(/\/$/, '')}/${childRel}`;
      const childPath = join(dir, entry.name);
      if (entry.isDirectory()) subfolders.push(childRel);
      else if (entry.isFile()) {
        try {
          files.push({ path: childPath, rel: childRel, size: (await stat(childPath)).size });
        } catch (err) {
          plan.failures.push(failureOf(childShow, err));
        }
      } else if (entry.isSymbolicLink()) {
        try {
          const target = await stat(childPath);
          if (target.isFile()) files.push({ path: childPath, rel: childRel, size: target.size });
          else
            plan.failures.push({
              path: childShow,
              error: `${childShow} is a link to a folder; links to folders are not followed`,
              exitCode: EXIT.usage,
            });
        } catch (err) {
          plan.failures.push(failureOf(childShow, err));
        }
      }
    }
    // Popped last-first: push in reverse so that folders are walked in name order.
    for (const sub of subfolders.reverse()) stack.push(sub);
  }
  plan.dirs = dirs.reverse();
  files.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  return files;
}

/**
 * Upload: a file goes to `dst` (or into it, keeping its name, when `dst` ends in `/` or is a location's
 * root); a folder's files go under `dst` as a prefix, keys relative to the folder with `/` separators.
 */
export async function planUpload(src: string, dst: Place): Promise<LocalPlan> {
  const plan: LocalPlan = { tasks: [], folder: false, dirs: [], failures: [] };
  const path = resolve(expandHome(src));
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(path);
  } catch (err) {
    throw localError(err, src);
  }
  const target = clean(dst.path);
  if (info.isFile()) {
    const key = target === '' || target.endsWith('/') ? under(target, basename(path)) : target;
    plan.tasks.push({ kind: 'upload', local: src, location: dst.location, key, size: info.size });
    return plan;
  }
  if (!info.isDirectory()) throw usageError(`${src} is neither a file nor a folder`);
  plan.folder = true;
  for (const file of await walk(path, src, plan))
    plan.tasks.push({
      kind: 'upload',
      local: `${src.replace(/\/$/, '')}/${file.rel}`,
      location: dst.location,
      key: under(target, file.rel),
      size: file.size,
    });
  return plan;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw localError(err, path);
  }
}

/** Whether `path` is a folder on this computer (false when it does not exist). */
async function isFolder(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw localError(err, path);
  }
}

/**
 * Download: a path ending in `/` is a prefix, every file under it lands under the folder `dst` at its
 * path relative to the prefix; any other path is one file, written to `dst` (or into it, keeping its
 * name, when `dst` is a folder or ends in `/`). A name that would land outside `dst` (`..` as a
 * segment, which an object store allows) is refused as a failure, never written.
 */
export async function planDownload(api: Api, src: Place, dst: string): Promise<LocalPlan> {
  const plan: LocalPlan = { tasks: [], folder: false, dirs: [], failures: [] };
  const local = expandHome(dst);
  const source = clean(src.path);
  if (source === '' || source.endsWith('/')) {
    plan.folder = true;
    if (!(await isFolder(local)) && (await exists(local)))
      throw usageError(
        `${dst} is a file, where a folder is needed: a prefix ending in / downloads into a folder`,
      );
    const prefix = source.replace(/\/$/, '');
    const answer = await api.send('POST', '/v1/list', {
      body: { ...locationRef(src.location), path: prefix, recurse: true },
    });
    const root = resolve(local);
    for (const entry of answer.entries) {
      if (entry.isDir) continue;
      const rel = prefix === '' ? entry.path : entry.path.slice(prefix.length + 1);
      const to = resolve(root, ...rel.split('/'));
      if (rel.split('/').some((s) => s === '..' || s === '.' || s === '') || !to.startsWith(root + sep)) {
        plan.failures.push({
          path: `${src.location}:${entry.path}`,
          error: `${src.location}:${entry.path} has a name that would be written outside ${dst}; skipped`,
          exitCode: EXIT.usage,
        });
        continue;
      }
      plan.tasks.push({
        kind: 'download',
        location: src.location,
        key: entry.path,
        local: join(local, ...rel.split('/')),
        size: entry.size,
      });
    }
    return plan;
  }
  const path = filesPath(src.location, source);
  let head = await api.raw('HEAD', path, { pass: [400, 404] });
  if (!head.ok) {
    // A HEAD answer has no words. 400 is a folder (or a bucket) when it lists: that gets the fix;
    // anything else is asked again as a GET for the server's own message (no such file or location).
    if (head.status === 400) {
      const listed = await api
        .send('POST', '/v1/list', { body: { ...locationRef(src.location), path: source } })
        .then(() => true)
        .catch(() => false);
      if (listed)
        throw usageError(
          `${src.location}:${source} is a folder, where a file is needed; write ${src.location}:${source}/ to download everything under it`,
        );
    }
    head = await api.raw('GET', path);
    await head.body?.cancel();
  }
  const length = head.headers.get('content-length');
  const name = basename(source);
  const into = dst.endsWith('/') || dst.endsWith(sep) || (await isFolder(local));
  plan.tasks.push({
    kind: 'download',
    location: src.location,
    key: source,
    local: into ? join(local, name) : local,
    size: length === null ? -1 : Number(length),
  });
  return plan;
}
