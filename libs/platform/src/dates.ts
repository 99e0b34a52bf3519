/**
 * The one reading of dates and timestamps that clients send, for both services. JavaScript's
 * `Date` cannot be the validator: it rolls impossible values over (`2026-02-30` is 2 March,
 * `24:00` the next day), so each field is checked against the calendar first.
 */

/** `YYYY-MM-DD`. */
export const CALENDAR_DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * ISO 8601 / RFC 3339 date-time with an offset: `2026-08-03T23:59:59.000Z`, `…T01:00+02:00`;
 * seconds and fraction optional, the offset's colon too (`+0200`).
 */
export const TIMESTAMP_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:Z|([+-])(\d{2}):?(\d{2}))$/;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Whether year (1–9999), month and day name a day of the Gregorian calendar. */
function dayExists(year: number, month: number, day: number): boolean {
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

/** Milliseconds since the epoch of a UTC date and time; `Date.UTC` would move years 0–99 to 19xx. */
function utcMillis(year: number, month: number, day: number, ms: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getTime() + ms;
}

/** Whether `value` is a `YYYY-MM-DD` date of a day that exists. */
export function isCalendarDate(value: unknown): value is string {
  const match = typeof value === 'string' ? CALENDAR_DATE_PATTERN.exec(value) : null;
  return match !== null && dayExists(Number(match[1]), Number(match[2]), Number(match[3]));
}

/** The instant a timestamp (TIMESTAMP_PATTERN) names, or undefined when any field is out of range. */
export function parseTimestamp(value: unknown): Date | undefined {
  const match = typeof value === 'string' ? TIMESTAMP_PATTERN.exec(value) : null;
  if (match === null) return undefined;
  const [year, month, day, hour, minute, second] = match
    .slice(1, 7)
    .map((part) => Number(part ?? 0));
  const [fraction, sign, offsetHours, offsetMinutes] = match.slice(7);
  if (!dayExists(year, month, day) || hour > 23 || minute > 59 || second > 59) return undefined;
  if (Number(offsetHours ?? 0) > 23 || Number(offsetMinutes ?? 0) > 59) return undefined;
  const offset =
    (sign === '-' ? -1 : 1) * (Number(offsetHours ?? 0) * 60 + Number(offsetMinutes ?? 0));
  const ms =
    ((hour * 60 + minute - offset) * 60 + second) * 1000 +
    Math.floor(Number(`0.${fraction ?? 0}`) * 1000);
  return new Date(utcMillis(year, month, day, ms));
}

/** A `YYYY-MM-DD` date (its UTC midnight) or a timestamp, as a `since` filter takes either. */
export function parseDateOrTimestamp(value: unknown): Date | undefined {
  if (!isCalendarDate(value)) return parseTimestamp(value);
  const [year, month, day] = value.split('-').map(Number);
  return new Date(utcMillis(year, month, day, 0));
}
