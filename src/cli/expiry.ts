// `--expires` for shares and sends: an RFC 3339 time, or a span from now (`30m`, `12h`, `7d`, `2w`),
// sent as the API's `expires_at` (docs/api.md, "Share links").
import { usageError } from './exit.js';

const SPAN = /^(\d+)\s*(m|min|h|d|w)$/i;
const UNIT_MS: Record<string, number> = {
  m: 60_000,
  min: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

export function expiresAt(text: string, now: number = Date.now()): string {
  const span = SPAN.exec(text.trim());
  if (span)
    return new Date(
      now + Number(span[1]) * (UNIT_MS[(span[2] as string).toLowerCase()] as number),
    ).toISOString();
  const ms = Date.parse(text);
  if (/^\d{4}-\d{2}-\d{2}T/.test(text) && !Number.isNaN(ms)) return new Date(ms).toISOString();
  throw usageError(`--expires takes a span such as 30m, 12h, 7d, 2w or an RFC 3339 time, got "${text}"`);
}
