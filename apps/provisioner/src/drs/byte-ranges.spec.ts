import { rangeOf } from './byte-ranges';

/** RFC 9110 §14.1.2 and §14.2: one `bytes=` range resolved against a size, at every edge. */
describe('rangeOf', () => {
  const SIZE = 100;

  it.each([
    ['no header', undefined, 'whole'],
    ['the first byte', 'bytes=0-0', { start: 0, end: 0 }],
    ['the last byte by position', 'bytes=99-99', { start: 99, end: 99 }],
    ['the last byte as a suffix', 'bytes=-1', { start: 99, end: 99 }],
    ['an open end', 'bytes=10-', { start: 10, end: 99 }],
    ['an end past the size, clamped', 'bytes=90-1000', { start: 90, end: 99 }],
    ['an end at the size, clamped', 'bytes=0-100', { start: 0, end: 99 }],
    ['a suffix longer than the object: all of it', 'bytes=-1000', { start: 0, end: 99 }],
    ['a suffix of exactly the size', 'bytes=-100', { start: 0, end: 99 }],
    ['a start at the size', 'bytes=100-', 'unsatisfiable'],
    ['a start past the size', 'bytes=1000-2000', 'unsatisfiable'],
    ['a zero suffix', 'bytes=-0', 'unsatisfiable'],
    ['an end before its start: ignored, whole', 'bytes=50-10', 'whole'],
    ['several ranges: whole', 'bytes=0-1,5-6', 'whole'],
    ['another unit: whole', 'items=0-1', 'whole'],
    ['no numbers: whole', 'bytes=-', 'whole'],
    ['a negative start: whole', 'bytes=--5', 'whole'],
    ['digits past 19: whole', `bytes=${'9'.repeat(20)}-`, 'whole'],
    ['white space around it', '  bytes=5-6  ', { start: 5, end: 6 }],
  ])('%s', (_name, header, expected) => {
    expect(rangeOf(header, SIZE)).toEqual(expected);
  });

  it('an empty object has no byte to give: every range is unsatisfiable, no range is whole', () => {
    expect(rangeOf('bytes=0-0', 0)).toBe('unsatisfiable');
    expect(rangeOf('bytes=-5', 0)).toBe('unsatisfiable');
    expect(rangeOf(undefined, 0)).toBe('whole');
  });

  it('a one-byte object', () => {
    expect(rangeOf('bytes=0-', 1)).toEqual({ start: 0, end: 0 });
    expect(rangeOf('bytes=1-', 1)).toBe('unsatisfiable');
    expect(rangeOf('bytes=-1', 1)).toEqual({ start: 0, end: 0 });
  });
});
