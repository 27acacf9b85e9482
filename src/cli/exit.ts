// The exit codes of `ferry` (docs/cli.md, "Exit codes") and the one place that turns an error into a
// message on stderr and a code. Kept free of imports so that every path of the program can use it.

export const EXIT = {
  ok: 0,
  /** The server failed (5xx), could not be reached, or something unexpected happened. */
  failure: 1,
  /** The command line is wrong, or the server refused the request as invalid (400, 413, 415, 422). */
  usage: 2,
  /** Nothing of yours has that name or id (404, 410). */
  notFound: 3,
  /** The request conflicts with the state of things (409), or ferry's rate limit (429). */
  conflict: 4,
  /**
   * No API key, the server did not accept it (401), or the key lacks the scope the request needs (403
   * naming it; docs/api.md, "Scopes").
   */
  auth: 5,
  /** A job or transfer that was watched ended failed, partial or canceled. */
  workFailed: 6,
  /** A verify ended complete and found objects that differ or are missing on a side (docs/cli.md, "verify"). */
  differences: 7,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error the client expects: its message is for the user, its code is the exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
    /** The server's 403 for a scope the key lacks (docs/api.md, "Scopes"). */
    readonly forbidden = false,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export const usageError = (message: string) => new CliError(message, EXIT.usage);

/** Prints the error as `ferry: message` and returns the exit code for it. */
export function report(err: unknown): number {
  const e = err as { name?: string; message?: string; code?: string; stack?: string };
  let code: number = EXIT.failure;
  if (err instanceof CliError) code = err.exitCode;
  // The local commands' errors: bad settings, a bad --expires-at, a bad argument to serve or migrate.
  else if (e?.name === 'ConfigError' || e?.name === 'FerryError' || e?.code?.startsWith('ERR_PARSE_ARGS'))
    code = EXIT.usage;
  const message = code === EXIT.failure && !(err instanceof CliError) ? (e?.stack ?? String(err)) : e.message;
  process.stderr.write(`ferry: ${message}\n`);
  return code;
}
