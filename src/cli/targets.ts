// How the client names places. On the command line a place is `location:path` (as rclone writes it) or
// `location/path`; the API takes `location:path` for copies and `location/path` for move, remove, pull,
// share and send (docs/api.md, "Copy" and "Move, remove, pull"), so each command converts. A location is
// its label, or its id when the text is a UUID (docs/api.md, "Addressing a location").

import { CliError, EXIT } from './exit.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface Place {
  location: string;
  path: string;
}

/**
 * A path on this computer rather than a place in a location: `.`, `..`, or starting with `./`, `../`,
 * `/` or `~`. `cp` and `mv` upload and download with them; every other command refuses them with advice
 * rather than sending the API a location named "." (docs/cli.md, "Places"). A bare name (`report.pdf`)
 * stays a location, as it always was, so that `ferry ls photos` keeps its meaning.
 */
export function isLocalPath(arg: string): boolean {
  return arg === '.' || arg === '..' || /^(\.\.?\/|\/|~)/.test(arg);
}

/** Splits at the first `:`, or else at the first `/`; a bare word is the location's root. */
export function parsePlace(arg: string): Place {
  if (isLocalPath(arg)) {
    throw new CliError(
      `"${arg}" is a path on this computer; only cp and mv take one (to upload or download); here name a place in a location, written location:bucket/path (ferry locations lists them)`,
      EXIT.usage,
    );
  }
  const colon = arg.indexOf(':');
  if (colon >= 0) return { location: arg.slice(0, colon), path: arg.slice(colon + 1) };
  const slash = arg.indexOf('/');
  if (slash >= 0) return { location: arg.slice(0, slash), path: arg.slice(slash + 1) };
  return { location: arg, path: '' };
}

/** The body fields that address a location: `{id}` for a UUID, `{name}` otherwise. */
export function locationRef(location: string): { id: string } | { name: string } {
  return UUID.test(location) ? { id: location } : { name: location };
}

/** `location:path` for /v1/copy. */
export function colonForm(arg: string): string {
  const { location, path } = parsePlace(arg);
  return `${location}:${path}`;
}

/** `location/path` for /move, /remove, /pull, /share and /send. */
export function slashForm(arg: string): string {
  const { location, path } = parsePlace(arg);
  const rest = path.replace(/^\/+/, '');
  return rest === '' ? location : `${location}/${rest}`;
}

export const literalOption = {
  literal: {
    type: 'boolean',
    describe:
      'every path is an exact name, never a pattern. The default: exact unless a path holds *, ? or { (so "[2024] report.pdf" is one file)',
  },
} as const;

/**
 * Whether a body's paths go as exact names (docs/api.md, "Exact names"; docs/cli.md): --literal, or no
 * path holds a glob character a shell user would mean (`*`, `?`, `{`). `[` alone is a file's name.
 */
export function literalFor(paths: string[], flag: boolean | undefined): boolean {
  if (flag !== undefined) return flag;
  return !paths.some((p) => /[*?{]/.test(p));
}
