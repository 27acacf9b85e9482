// The per-request logger Fastify hands to request.log and reply.log, made only when something logs.
// Fastify builds a pino child (with the request id) for every request; a request that logs nothing
// but its access line (written by the onResponse hook from the app's own child) never uses it, and
// making it was 2% of the server's busy time serving /healthz, and 3 to 13% of its CPU per request
// measured again against Fastify's own (docs/performance.md, "bench/api"). The first call builds the
// same child pino would have, so a line logged through request.log carries the request id as before;
// test/http/lazy-logger.test.ts compares the lines with those of Fastify's own child logger.
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, LevelWithSilentOrString, LogFn } from 'pino';

export class LazyChildLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  /** The child, made on first use. */
  get logger(): FastifyBaseLogger {
    this.made ??= this.parent.child(this.bindings, this.options);
    return this.made;
  }

  get level(): LevelWithSilentOrString {
    return this.made?.level ?? this.options.level ?? this.parent.level;
  }
  set level(level: LevelWithSilentOrString) {
    this.logger.level = level;
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }

  declare fatal: LogFn;
  declare error: LogFn;
  declare warn: LogFn;
  declare info: LogFn;
  declare debug: LogFn;
  declare trace: LogFn;
  declare silent: LogFn;
}

// On the prototype, not per instance: a request makes one small object, not seven closures.
for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const) {
  LazyChildLogger.prototype[level] = function (this: LazyChildLogger, ...args: unknown[]) {
    (this.logger[level] as (...a: unknown[]) => void)(...args);
  } as LogFn;
}
