// When a scheduled send goes out (docs/api.md, "Send"): `scheduledAt` is ISO 8601, or plain words read
// by chrono-node ("in 2 hours", "tomorrow at 9am", "next friday 17:00", "tomorrow 9am PST"). Words are
// read in UTC unless they name a zone themselves or `timezone` names an IANA zone (luxon); a bare day
// means 09:00 there. The result must lie in the future and at most a year ahead.
import * as chrono from 'chrono-node';
import { DateTime, IANAZone } from 'luxon';
import { invalid } from '../../errors.js';

export const MAX_AHEAD_MS = 366 * 24 * 3600_000;

export function checkTimezone(timezone: string | undefined): string {
  if (timezone === undefined) return 'UTC';
  if (!IANAZone.isValidZone(timezone)) {
    throw invalid(`timezone must be an IANA time zone such as Europe/Paris, got "${timezone}"`);
  }
  return timezone;
}

/** Epoch ms of `scheduledAt`, read at `now` in `timezone`; 400 when unreadable, past or too far. */
export function resolveSchedule(scheduledAt: string, now: number, timezone?: string): number {
  const zone = checkTimezone(timezone);
  const text = scheduledAt.trim();
  let at: number | undefined;
  if (/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/i.test(text)) {
    const parsed = DateTime.fromISO(text.replace(' ', 'T'), { zone });
    if (!parsed.isValid) throw invalid(`scheduledAt "${scheduledAt}" is not a valid ISO 8601 time`);
    // A date alone is a bare day: 09:00 in the zone.
    at = (text.length === 10 ? parsed.set({ hour: 9 }) : parsed).toMillis();
  } else {
    at = fromWords(text, now, zone);
  }
  if (at === undefined) {
    throw invalid(
      `scheduledAt "${scheduledAt}" is not a time ferry can read: use ISO 8601 or words like "tomorrow at 9am"`,
    );
  }
  if (at <= now) throw invalid(`scheduledAt "${scheduledAt}" is in the past (${new Date(at).toISOString()})`);
  if (at > now + MAX_AHEAD_MS) throw invalid('scheduledAt must be at most a year ahead');
  return at;
}

function fromWords(text: string, now: number, zone: string): number | undefined {
  const reference = DateTime.fromMillis(now, { zone });
  // chrono reads the words against the wall clock of the zone; its instant is then re-read below.
  const [result] = chrono.parse(
    text,
    { instant: new Date(now), timezone: reference.offset },
    { forwardDate: true },
  );
  if (!result) return undefined;
  const start = result.start;
  if (start.isCertain('timezoneOffset')) {
    const date = start.date();
    if (!start.isCertain('hour'))
      return DateTime.fromJSDate(date).set({ hour: 9, minute: 0, second: 0, millisecond: 0 }).toMillis();
    return date.getTime();
  }
  // Wall-clock fields in the zone (luxon applies its daylight-saving rules for that date).
  const bareDay = !start.isCertain('hour');
  return DateTime.fromObject(
    {
      year: start.get('year') ?? reference.year,
      month: start.get('month') ?? reference.month,
      day: start.get('day') ?? reference.day,
      hour: bareDay ? 9 : (start.get('hour') ?? 0),
      minute: bareDay ? 0 : (start.get('minute') ?? 0),
      second: bareDay ? 0 : (start.get('second') ?? 0),
    },
    { zone },
  ).toMillis();
}
