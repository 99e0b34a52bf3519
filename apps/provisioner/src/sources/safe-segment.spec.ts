import { isSafeSegment } from './safe-segment';

describe('isSafeSegment', () => {
  it.each(['DS-1', 'ELX_LU_SUB-1', 'a.b', '0', 'x'.repeat(128)])('accepts %j', (id) =>
    expect(isSafeSegment(id)).toBe(true),
  );
  it.each(['', '.', '..', '../x', 'a/b', '-x', '.hidden', 'x'.repeat(129), 'a b', 'é', 7, null])(
    'rejects %j',
    (id) => expect(isSafeSegment(id)).toBe(false),
  );
});
