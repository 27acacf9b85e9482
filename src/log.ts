// JSON logs with pino. Secrets are typed as Secret (src/secret.ts) and print as "[redacted]"; the
// redact paths below are the second line of defence for headers and fields that carry credentials.
//
// The service writes its log to stdout asynchronously (pino's sonic-boom destination with sync off):
// a line is queued and written with the lines after it once the previous write is done, so a busy
// server makes one write for many lines instead of one blocking write per request. What is queued is
// written out before the process exits (flushSync on 'exit', which process.exit() also runs).
//
// The lines of one turn of the event loop are handed to sonic-boom together, once the turn's I/O
// callbacks have run (setImmediate): a write to a file finishes in microseconds, so sonic-boom alone
// found one or two lines waiting each time and paid a thread-pool write per request (10% of the
// server's CPU serving /healthz; docs/performance.md, "bench/api").
import { type DestinationStream, type Logger, pino } from 'pino';

export type { Logger };

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  '*.secret',
  '*.password',
  '*.token',
  '*.access_token',
  '*.refresh_token',
  '*.secret_access_key',
];

/**
 * Process warnings (deprecations, a library's notice that it will soon need a newer Node) as log
 * lines instead of Node's plain text on stderr, so that everything `ferry serve` writes is JSON.
 * Node prints a warning through the 'warning' listener it installs at start; that listener is
 * replaced here.
 */
export function logProcessWarnings(logger: Logger): void {
  process.removeAllListeners('warning');
  process.on('warning', (warning) => {
    const code = (warning as Error & { code?: unknown }).code;
    logger.warn(
      { warning: warning.name, ...(typeof code === 'string' ? { code } : {}) },
      warning.message.replace(/\s+/g, ' ').trim(),
    );
  });
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'ferry' },
    timestamp: isoTime,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  };
  return pino(options, destination ?? stdoutDestination());
}

/**
 * pino's isoTime, with the text kept while the millisecond is the same: a busy server writes many
 * lines per millisecond, and formatting the date for each was 1.8% of its CPU serving /healthz.
 */
export function isoTime(): string {
  const now = Date.now();
  if (now !== timeAt) {
    timeAt = now;
    timeText = `,"time":"${new Date(now).toISOString()}"`;
  }
  return timeText;
}
let timeAt = Number.NaN;
let timeText = '';

let stdout: TurnBatch | undefined;

/** One asynchronous stdout destination per process, flushed when the process exits. */
function stdoutDestination(): DestinationStream {
  if (stdout) return stdout;
  const destination = new TurnBatch(pino.destination({ dest: 1, sync: false }));
  process.on('exit', () => {
    try {
      destination.flushSync();
    } catch {
      // Nothing queued, or stdout already closed: nothing more can be written.
    }
  });
  stdout = destination;
  return destination;
}

/** Collects the lines written during one turn of the event loop and passes them on as one write. */
export class TurnBatch implements DestinationStream {
  private pending = '';
  private scheduled = false;

  constructor(private readonly out: { write(text: string): unknown; flushSync(): void }) {}

  write(line: string): void {
    this.pending += line;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.pass);
    }
  }

  /** Writes out everything, this turn's lines too, before returning (the process is exiting). */
  flushSync(): void {
    this.pass();
    this.out.flushSync();
  }

  private readonly pass = (): void => {
    this.scheduled = false;
    const text = this.pending;
    this.pending = '';
    if (text !== '') this.out.write(text);
  };
}
