// When a scheduled send goes out (docs/api.md, "Send"): `scheduledAt` is ISO 8601, or plain words read
// by chrono-node ("in 2 hours", "tomorrow at 9am", "next friday 17:00", "tomorrow 9am PST"). Words are
// read in UTC unless they name a zone or offset themselves (then wholly in it: its "tomorrow") or
// `timezone` names an IANA zone (luxon); a bare day means 09:00 there; "next friday" is the coming one. The result must lie in the
// future and at most a year (365 days) ahead. The text is at most 100 characters, checked before
// chrono-node reads it: its cost grows with the text.
// Its English module only: the package's main module loads every locale's parsers (266 files, about
// 0.3 s of CPU in every process that starts ferry; 1 s under the tests' TypeScript loader) for the same
// `parse`, which is English's casual parser either way.

import type { ParsedComponents, ParsedResult } from 'chrono-node';
import * as chrono from 'chrono-node/en';
import { DateTime, FixedOffsetZone, IANAZone, type Zone } from 'luxon';
import { SCHEDULED_AT_MAX } from '../../api/input.js';
import { invalid } from '../../errors.js';

/** A year ahead: 365 days, so "in 366 days" is always too far, leap year or not. */
export const MAX_AHEAD_MS = 365 * 24 * 3600_000;

/** ISO 8601 as ferry reads it: a date, optionally a time and a zone; the year may be expanded (±YYYYYY). */
const ISO = /^(\d{4}|[+-]\d{6})-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

export function checkTimezone(timezone: string | undefined): string {
  if (timezone === undefined) return 'UTC';
  if (!IANAZone.isValidZone(timezone)) {
    throw invalid(`timezone must be an IANA time zone such as Europe/Paris, got "${timezone}"`);
  }
  return timezone;
}

/** Epoch ms of `scheduledAt`, read at `now` in `timezone`; 400 when unreadable, past or too far. */
export function resolveSchedule(scheduledAt: string, now: number, timezone?: string): number {
  if (scheduledAt.length > SCHEDULED_AT_MAX) {
    throw invalid(`scheduledAt must be at most ${SCHEDULED_AT_MAX} characters`);
  }
  const zone = checkTimezone(timezone);
  const text = scheduledAt.trim();
  let at: number | undefined;
  const iso = ISO.exec(text);
  if (iso) {
    const parsed = DateTime.fromISO(text.replace(' ', 'T'), { zone });
    if (!parsed.isValid) throw invalid(`scheduledAt "${scheduledAt}" is not a valid ISO 8601 time`);
    // A date alone is a bare day: 09:00 in the zone.
    at = (iso[2] === undefined ? parsed.set({ hour: 9 }) : parsed).toMillis();
  } else {
    at = fromWords(text, now, zone);
  }
  if (at === undefined) {
    throw invalid(
      `scheduledAt "${scheduledAt}" is not a time ferry can read: use ISO 8601 or words like "tomorrow at 9am"`,
    );
  }
  if (!Number.isFinite(at)) throw invalid(`scheduledAt "${scheduledAt}" is not a date that exists`);
  if (at <= now) throw invalid(`scheduledAt "${scheduledAt}" is in the past (${new Date(at).toISOString()})`);
  if (at > now + MAX_AHEAD_MS) throw invalid('scheduledAt must be at most a year ahead');
  return at;
}

/**
 * Words are taken only when chrono read all of them as one moment: what it left out may be only
 * filler (`at`, `on`, `the`, punctuation). "not tomorrow", "tomorrow-ish" or "the day after never"
 * would otherwise be read as the part chrono understood (docs/api.md, "Send").
 */
const FILLER = new Set(['at', 'on', 'the']);

function notUnderstood(text: string, results: ParsedResult[]): string | undefined {
  let rest = '';
  let from = 0;
  for (const result of results) {
    rest += `${text.slice(from, result.index)} `;
    from = result.index + result.text.length;
  }
  rest += text.slice(from);
  const words = rest.split(/[\s,.;:!?()"'-]+/).filter((w) => w !== '' && !FILLER.has(w.toLowerCase()));
  return words.length === 0 ? undefined : words.join(' ');
}

const EXAMPLES = '"tomorrow at 9am", "next friday 17:00", "in 2 hours", or ISO 8601 like "2026-12-01T09:00"';

/**
 * "next friday": chrono reads it as the Friday of next week, so said on a Wednesday it is nine days on.
 * People mean the coming one (docs/api.md, "Send"): the words are read without "next", as "friday",
 * and a day that lands on today (said on a Friday) moves a week on.
 */
const NEXT_WEEKDAY =
  /\bnext\s+(?=(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?\b|(?:mon|tue|wed|thu|fri|sat|sun)\b)/i;

function fromWords(words: string, now: number, zone: string): number | undefined {
  const coming = NEXT_WEEKDAY.test(words);
  const text = coming ? words.replace(NEXT_WEEKDAY, '') : words;
  const at = readWordsAt(text, now, zone);
  if (at === undefined || !coming) return at?.ms;
  return at.sameDay ? DateTime.fromMillis(at.ms, { zone: at.zone }).plus({ weeks: 1 }).toMillis() : at.ms;
}

/** The moment the words name, the zone it was read in, and whether it falls on today there. */
function readWordsAt(
  text: string,
  now: number,
  zone: string,
): { ms: number; zone: Zone | string; sameDay: boolean } | undefined {
  const results = chrono.parse(
    text,
    { instant: new Date(now), timezone: DateTime.fromMillis(now, { zone }).offset },
    { forwardDate: true },
  );
  const first = results[0]?.start;
  if (!first) return undefined;
  const leftOver = results.length > 1 ? text : notUnderstood(text, results);
  if (leftOver !== undefined) {
    throw invalid(
      results.length > 1
        ? `scheduledAt "${text}" names more than one time; give one, like ${EXAMPLES}`
        : `scheduledAt "${text}": "${leftOver}" is not understood; write one time, like ${EXAMPLES}`,
    );
  }
  let start = first;
  let where: Zone | string = zone;
  if (start.isCertain('timezoneOffset')) {
    // The words name a zone or an offset ("friday EST", "tomorrow 9am PST", "friday UTC+2"): they are
    // read again with that offset as the reference, so that "tomorrow" is that zone's tomorrow, and a
    // bare day is 09:00 there (docs/api.md, "Send"). chrono gives the offset for the day named, so
    // "ET" is -4 in July and -5 in November. Relative words ("in 2 hours") are certain of theirs too:
    // the reference's own, so reading them again changes nothing.
    const offset = start.get('timezoneOffset') ?? 0;
    start = readWords(text, now, offset) ?? start;
    where = FixedOffsetZone.instance(offset);
    if (start.isCertain('hour')) return dated(start.date().getTime(), now, where);
  }
  // Wall-clock fields in the zone (luxon applies its daylight-saving rules for that date).
  const reference = DateTime.fromMillis(now, { zone: where });
  const bareDay = !start.isCertain('hour');
  let at = DateTime.fromObject(
    {
      year: start.get('year') ?? reference.year,
      month: start.get('month') ?? reference.month,
      day: start.get('day') ?? reference.day,
      hour: bareDay ? 9 : (start.get('hour') ?? 0),
      minute: bareDay ? 0 : (start.get('minute') ?? 0),
      second: bareDay ? 0 : (start.get('second') ?? 0),
    },
    { zone: where },
  );
  // chrono takes "friday" said on a Friday for today until its implied noon; the 09:00 of a bare
  // weekday that has passed means the same day next week, as "friday" said after noon does.
  if (bareDay && start.isCertain('weekday') && !start.isCertain('day') && at.toMillis() <= now) {
    at = at.plus({ weeks: 1 });
  }
  return dated(at.toMillis(), now, where);
}

function dated(
  ms: number,
  now: number,
  zone: Zone | string,
): { ms: number; zone: Zone | string; sameDay: boolean } {
  const day = (t: number) => DateTime.fromMillis(t, { zone }).toISODate();
  return { ms, zone, sameDay: day(ms) === day(now) };
}

/** chrono's reading of the words against the wall clock at `offset` minutes from UTC, at `now`. */
function readWords(text: string, now: number, offset: number): ParsedComponents | undefined {
  const [result] = chrono.parse(text, { instant: new Date(now), timezone: offset }, { forwardDate: true });
  return result?.start;
}
