import { ValidationFailedError } from '@app/errors';
import { MAX_ENTITLEMENTS, parseEntitlements } from './entitlement';

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
      },
    ]);
  });

  it('takes a null or absent end and a null mail as unknown', () => {
    const { end: _end, ...withoutEnd } = valid;
    expect(parseEntitlements([{ ...valid, end: null, mail: null }, withoutEnd])).toMatchObject([
      { endDate: null, mail: null },
      { endDate: null, mail: 'a@x.org' },
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
