import { ValidationFailedError } from '@app/errors';
import {
  byEntitlementKey,
  Entitlement,
  latestHistoryEnd,
  MAX_ENTITLEMENTS,
  parseEntitlements,
} from './entitlement';

const valid = {
  application: 4056,
  resource: 'ELU_I_131',
  user: 'sub',
  mail: 'a@x.org',
  end: '2026-08-03T23:59:59.000Z',
};

function problems(body: unknown) {
  try {
    parseEntitlements(body);
  } catch (error) {
    if (error instanceof ValidationFailedError) return error.errors;
    throw error;
  }
  throw new Error('expected a validation error');
}

describe('parseEntitlements', () => {
  it('reads REMS items, turning end into its UTC date and ignoring unknown fields', () => {
    expect(
      parseEntitlements([{ ...valid, end: '2026-08-04T01:00:00+02:00', extra: true }]),
    ).toEqual([
      {
        application: 4056,
        resource: 'ELU_I_131',
        user: 'sub',
        mail: 'a@x.org',
        endDate: '2026-08-03',
        endTime: Date.parse('2026-08-03T23:00:00Z'),
      },
    ]);
  });

  it('takes a null or absent end and a null mail as unknown', () => {
    const { end: _end, ...withoutEnd } = valid;
    expect(parseEntitlements([{ ...valid, end: null, mail: null }, withoutEnd])).toMatchObject([
      { endDate: null, endTime: null, mail: null },
      { endDate: null, endTime: null, mail: 'a@x.org' },
    ]);
  });

  it.each([
    ['application', '4056'],
    ['application', 1.5],
    ['application', 0],
    ['resource', ''],
    ['resource', 'X'.repeat(21)],
    ['user', 42],
    ['user', 'x'.repeat(65)],
    ['mail', 'no-at-sign'],
    ['mail', 7],
    ['end', '2026-08-03'],
    ['end', '2026-13-45T00:00:00Z'],
    ['end', '2026-02-30T23:59:59.000Z'],
    ['end', '2026-04-31T00:00:00+02:00'],
    ['end', '2026-08-03T24:00:00Z'],
    ['end', 12345],
  ])('rejects %s = %p', (field, value) => {
    expect(problems([valid, { ...valid, [field]: value }])).toEqual([
      { index: 1, field, message: expect.any(String) },
    ]);
  });

  it('rejects a non-array body and oversized batches', () => {
    expect(problems({ ...valid })).toEqual([
      { field: 'body', message: 'must be a JSON array of entitlements' },
    ]);
    expect(problems(Array.from({ length: MAX_ENTITLEMENTS + 1 }, () => valid))).toHaveLength(1);
  });

  it('rejects items that are not objects', () => {
    expect(problems([null, [], 'x'])).toEqual(
      [0, 1, 2].map((index) => ({ index, message: 'must be an object' })),
    );
  });
});

describe('byEntitlementKey', () => {
  const row = (over: Partial<Entitlement> = {}): Entitlement => ({
    application: 7,
    resource: 'ELU_I_1',
    user: 'sub',
    mail: 'a@x.org',
    endDate: null,
    endTime: null,
    ...over,
  });
  const at = (iso: string) => ({ endTime: Date.parse(iso), endDate: iso.slice(0, 10) });

  it('takes the rows of one key as one entitlement ending at the latest end', () => {
    const [only] = byEntitlementKey([
      row(at('2024-01-05T10:00:00.000Z')),
      row(at('2031-02-01T00:00:00.000Z')),
      row(at('2025-06-01T00:00:00.000Z')),
    ]);
    expect(only).toMatchObject({
      index: 0,
      endDate: '2031-02-01',
      endTime: Date.parse('2031-02-01'),
    });
    expect(only.rowEnds).toHaveLength(3);
  });

  it('is open when any row is open, whatever the order (a re-grant after a revocation)', () => {
    const revoked = at('2024-01-05T10:00:00.000Z');
    for (const rows of [
      [row(revoked), row()],
      [row(), row(revoked)],
    ]) {
      expect(byEntitlementKey(rows)).toEqual([
        expect.objectContaining({ endTime: null, endDate: null, rowEnds: [revoked.endTime] }),
      ]);
    }
  });

  it('keeps keys apart, in order of first appearance, with the first mail given', () => {
    const keyed = byEntitlementKey([
      row({ user: 'b', mail: null }),
      row({ user: 'a' }),
      row({ user: 'b', mail: 'b@x.org' }),
      row({ user: 'a', application: 8 }),
      row({ user: 'a', resource: 'ELU_I_2' }),
    ]);
    expect(keyed.map((k) => [k.index, k.user, k.application, k.resource, k.mail])).toEqual([
      [0, 'b', 7, 'ELU_I_1', 'b@x.org'],
      [1, 'a', 7, 'ELU_I_1', 'a@x.org'],
      [3, 'a', 8, 'ELU_I_1', 'a@x.org'],
      [4, 'a', 7, 'ELU_I_2', 'a@x.org'],
    ]);
  });
});

describe('latestHistoryEnd', () => {
  const revokedAt = Date.parse('2026-03-01T12:00:00.000Z');
  const now = Date.parse('2026-03-02T08:00:00.000Z');

  it('is the latest row end that has passed: the revocation a re-grant carries', () => {
    expect(latestHistoryEnd([Date.parse('2025-01-01'), revokedAt], now, revokedAt)).toBe(revokedAt);
    expect(latestHistoryEnd([revokedAt, now - 1], now, null)).toBe(now - 1);
  });

  it('ignores ends still to come (current grants) and is null without history', () => {
    expect(latestHistoryEnd([], now, revokedAt)).toBeNull();
    expect(latestHistoryEnd([Date.parse('2030-01-01')], now, revokedAt)).toBeNull();
    expect(latestHistoryEnd([Date.parse('2030-01-01'), revokedAt - 1], now, null)).toBe(
      revokedAt - 1,
    );
  });

  it('takes the recorded revocation as past even when the clock of REMS ran ahead of ours', () => {
    const ahead = now + 60_000;
    expect(latestHistoryEnd([ahead], now, ahead)).toBe(ahead);
    expect(latestHistoryEnd([ahead], now, null)).toBeNull();
  });
});
