import { IMPOSSIBLE_DATES, IMPOSSIBLE_TIMESTAMPS } from '../../../test/support/hostile-input';
import { isCalendarDate, parseDateOrTimestamp, parseTimestamp } from './dates';

describe('isCalendarDate', () => {
  it('takes days that exist, leap days of leap years included', () => {
    for (const day of [
      '2026-01-31',
      '2024-02-29',
      '2000-02-29',
      '2026-12-31',
      '0001-01-01',
      '9999-12-31',
    ]) {
      expect(isCalendarDate(day)).toBe(true);
    }
  });

  it.each(IMPOSSIBLE_DATES)('refuses %j', (text) => {
    expect(isCalendarDate(text)).toBe(false);
  });

  it('refuses what is not a string', () => {
    for (const value of [null, undefined, 20260101, new Date(), ['2026-01-01']]) {
      expect(isCalendarDate(value)).toBe(false);
    }
  });
});

describe('parseTimestamp', () => {
  it('reads every accepted form to the instant it names', () => {
    expect(parseTimestamp('2026-08-03T23:59:59.000Z')?.toISOString()).toBe(
      '2026-08-03T23:59:59.000Z',
    );
    expect(parseTimestamp('2026-08-04T01:00:00+02:00')?.toISOString()).toBe(
      '2026-08-03T23:00:00.000Z',
    );
    expect(parseTimestamp('2026-08-03T20:30-0330')?.toISOString()).toBe('2026-08-04T00:00:00.000Z');
    expect(parseTimestamp('2026-08-03T23:59:59.123456789Z')?.toISOString()).toBe(
      '2026-08-03T23:59:59.123Z',
    );
    expect(parseTimestamp('0050-03-01T00:00:00Z')?.getUTCFullYear()).toBe(50);
  });

  it.each([
    ...IMPOSSIBLE_DATES.map((date) => `${date}T00:00:00Z`),
    ...IMPOSSIBLE_TIMESTAMPS,
    '2026-01-01',
    '2026-01-01 12:00:00Z',
  ])('refuses %j', (text) => {
    expect(parseTimestamp(text)).toBeUndefined();
  });
});

describe('parseDateOrTimestamp', () => {
  it('reads a date as its UTC midnight and a timestamp as itself', () => {
    expect(parseDateOrTimestamp('2026-01-31')?.toISOString()).toBe('2026-01-31T00:00:00.000Z');
    expect(parseDateOrTimestamp('2026-01-31T10:00:00+01:00')?.toISOString()).toBe(
      '2026-01-31T09:00:00.000Z',
    );
    expect(parseDateOrTimestamp('2026-02-30')).toBeUndefined();
  });
});
