// JSON logs with pino. Secrets are typed as Secret (src/secret.ts) and print as "[redacted]"; the
// redact paths below are the second line of defence for headers and fields that carry credentials.
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

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'ferry' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}
