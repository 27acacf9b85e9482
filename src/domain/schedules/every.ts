// When a schedule runs (docs/api.md, "Schedules"): `every` is a five-field cron expression (minute hour
// day-of-month month day-of-week, read by croner) or words from a small closed grammar translated to one
// ("every day at 02:00" is `0 2 * * *`). Anything else is 400 naming the part not understood. The text
// is at most EVERY_MAX characters, and what croner is asked costs at most a day's minutes (1,440 steps)
// before the first search: a pattern that can never fire (February 30th) is refused from its fields, not
// by letting croner search years for it. A schedule may not fire more often than every 5 minutes.
// Times are read in the schedule's IANA zone; across daylight-saving changes croner runs a wall time
// that does not exist (02:30 on a spring-forward day) at the same time plus the gap (03:30), and a
// wall time that exists twice (01:30 on a fall-back day) once, at its first occurrence.

import { Cron, CronPattern } from 'croner';
import { EVERY_MAX } from '../../api/schedules.js';
import { invalid } from '../../errors.js';

/** No schedule fires more often than this. */
export const MIN_INTERVAL_MINUTES = 5;

const EXAMPLES =
  'a five-field cron expression such as "30 2 * * *", or words such as "every day at 02:00", "every monday at 9am", "every weekday at 18:30", "every 15 minutes", "every 2 hours", "every month on the 1st at 03:00"';

const DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;
/** Minutes and hours that divide the hour and the day evenly: "every 7 minutes" would not. */
const MINUTE_STEPS = [5, 6, 10, 12, 15, 20, 30];
const HOUR_STEPS = [1, 2, 3, 4, 6, 8, 12];

function notUnderstood(part: string): Error {
  return invalid(`every: "${part}" is not understood; use ${EXAMPLES}`);
}

/** "02:00", "18:30", "9am", "9:30 pm", "noon", "midnight" → [hour, minute]. */
function readTime(words: string[]): [number, number] {
  const text = words.join('');
  if (text === 'noon') return [12, 0];
  if (text === 'midnight') return [0, 0];
  const match = /^(\d{1,2})(?::(\d{2}))?(am|pm)?$/.exec(text);
  if (match === null) throw notUnderstood(words.join(' ') || 'at');
  const [, h, m, half] = match;
  let hour = Number(h);
  const minute = m === undefined ? 0 : Number(m);
  if (half === undefined && m === undefined) throw notUnderstood(words.join(' '));
  if (half !== undefined) {
    if (hour < 1 || hour > 12) throw notUnderstood(words.join(' '));
    hour = (hour % 12) + (half === 'pm' ? 12 : 0);
  }
  if (hour > 23 || minute > 59) throw notUnderstood(words.join(' '));
  return [hour, minute];
}

/** The time after "at", or midnight when the words end without one. */
function atTime(rest: string[]): [number, number] {
  if (rest.length === 0) return [0, 0];
  const [at, ...time] = rest;
  if (at !== 'at' || time.length === 0) throw notUnderstood(rest.join(' '));
  return readTime(time);
}

function ordinal(word: string | undefined): number {
  const match = word === undefined ? null : /^(\d{1,2})(st|nd|rd|th)?$/.exec(word);
  const day = match === null ? Number.NaN : Number(match[1]);
  if (!(day >= 1 && day <= 31)) throw notUnderstood(word ?? 'on the');
  return day;
}

/** Words of the grammar → a cron expression; 400 naming the first part not understood. */
export function wordsToCron(text: string): string {
  const words = text
    .toLowerCase()
    .replace(/,/g, ' , ')
    .split(/\s+/)
    .filter((w) => w !== '');
  const [first, head, ...rest] = words;
  if (first !== 'every') throw notUnderstood(first ?? text);
  if (head === undefined) throw notUnderstood('every');
  if (head === 'minute') return tooOften('every minute');
  if (head === 'hour') return ended(rest, '0 * * * *');
  if (/^\d+$/.test(head)) {
    const n = Number(head);
    const [unit, ...after] = rest;
    if (unit === 'minutes' || unit === 'minute') {
      if (n < MIN_INTERVAL_MINUTES) return tooOften(`every ${n} minutes`);
      if (!MINUTE_STEPS.includes(n))
        throw invalid(`every: ${n} minutes does not divide the hour; use one of ${MINUTE_STEPS.join(', ')}`);
      return ended(after, `*/${n} * * * *`);
    }
    if (unit === 'hours' || unit === 'hour') {
      if (!HOUR_STEPS.includes(n))
        throw invalid(`every: ${n} hours does not divide the day; use one of ${HOUR_STEPS.join(', ')}`);
      return ended(after, n === 1 ? '0 * * * *' : `0 */${n} * * *`);
    }
    throw notUnderstood(unit ?? `every ${head}`);
  }
  if (head === 'day') return daily(rest, '*');
  if (head === 'weekday') return daily(rest, '1-5');
  if (head === 'weekend') return daily(rest, '0,6');
  if (head === 'month') {
    let [on, ...after] = rest;
    if (on !== 'on') throw notUnderstood(on ?? 'every month');
    if (after[0] === 'the') after = after.slice(1);
    const [day, ...time] = after;
    const dom = ordinal(day);
    const [hour, minute] = atTime(time);
    return `${minute} ${hour} ${dom} * *`;
  }
  // Day names: "every monday", "every monday and thursday at 9am", "every monday, wednesday and friday".
  const days: number[] = [];
  let i = 1;
  for (;;) {
    const word = words[i];
    const day = DAYS.findIndex((name) => word === name || word === `${name}s`);
    if (day < 0) throw notUnderstood(word ?? 'every');
    if (!days.includes(day)) days.push(day);
    i += 1;
    if (words[i] !== ',' && words[i] !== 'and') break;
    i += 1;
    if (words[i] === 'and') i += 1;
  }
  return daily(words.slice(i), days.sort((a, b) => a - b).join(','));
}

function daily(rest: string[], dow: string): string {
  const [hour, minute] = atTime(rest);
  return `${minute} ${hour} * * ${dow}`;
}

function ended(rest: string[], cron: string): string {
  if (rest.length > 0) throw notUnderstood(rest.join(' '));
  return cron;
}

function tooOften(what: string): never {
  throw invalid(`every: ${what} is too often; a schedule runs at most every ${MIN_INTERVAL_MINUTES} minutes`);
}

function pattern(cron: string, timezone: string): CronPattern {
  try {
    return new CronPattern(cron, timezone, { mode: '5-part' });
  } catch (err) {
    throw invalid(
      `every: "${cron}" is not a cron expression: ${(err as Error).message.replace(/^CronPattern: /, '')}`,
    );
  }
}

const MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Whether a day of the pattern exists: it names weekdays, last days, or a day a chosen month has. */
function canFire(p: CronPattern): boolean {
  if (!p.starDOW && p.dayOfWeek.some((d) => d !== 0)) return true;
  if (p.lastDayOfMonth || p.lastWeekday || p.nearestWeekdays.some((d) => d !== 0)) return true;
  return p.month.some((on, m) => on !== 0 && p.day.some((d, i) => d !== 0 && i + 1 <= (MONTH_DAYS[m] ?? 0)));
}

/** The shortest wait in minutes between two firings on the wall clock, over a day and into the next. */
function shortestGap(p: CronPattern): number {
  const minutes: number[] = [];
  p.hour.forEach((h, hour) => {
    if (h === 0) return;
    p.minute.forEach((m, minute) => {
      if (m !== 0) minutes.push(hour * 60 + minute);
    });
  });
  let gap = Number.POSITIVE_INFINITY;
  for (let i = 1; i < minutes.length; i += 1) gap = Math.min(gap, (minutes[i] ?? 0) - (minutes[i - 1] ?? 0));
  const first = minutes[0];
  const last = minutes.at(-1);
  if (first !== undefined && last !== undefined && minutes.length > 1)
    gap = Math.min(gap, 1440 - last + first);
  return gap;
}

export interface Every {
  /** As given. */
  every: string;
  /** The five-field cron expression it reads as. */
  cron: string;
}

/** Reads `every` (400 when ferry cannot): a cron expression as is, words through the grammar. */
export function readEvery(every: string, timezone: string): Every {
  if (every.length > EVERY_MAX) throw invalid(`every must be at most ${EVERY_MAX} characters`);
  const text = every.trim();
  let cron: string;
  if (/^every\b/i.test(text)) cron = wordsToCron(text);
  else {
    const fields = text.split(/\s+/).filter((f) => f !== '');
    if (fields.length !== 5) {
      throw invalid(
        `every: a cron expression has five fields (minute hour day-of-month month day-of-week), "${text}" has ${fields.length}; or use words such as "every day at 02:00"`,
      );
    }
    cron = fields.join(' ');
  }
  const p = pattern(cron, timezone);
  if (!canFire(p)) throw invalid(`every: "${cron}" names no day that exists, so it would never run`);
  if (shortestGap(p) < MIN_INTERVAL_MINUTES) {
    throw invalid(
      `every: "${cron}" runs more often than every ${MIN_INTERVAL_MINUTES} minutes; a schedule runs at most every ${MIN_INTERVAL_MINUTES} minutes`,
    );
  }
  return { every: text, cron };
}

/** The first time after `after` (epoch ms) that `cron` fires in `timezone`; undefined for none. */
export function nextRun(cron: string, timezone: string, after: number): number | undefined {
  const next = new Cron(cron, { timezone, mode: '5-part', paused: true }).nextRun(new Date(after));
  return next === null ? undefined : next.getTime();
}
