import { declaredBytes } from './dss.source';

describe('declaredBytes', () => {
  it('takes the text the submission system stores, and numbers', () => {
    expect(declaredBytes('2048')).toBe(2048);
    expect(declaredBytes(' 9 ')).toBe(9);
    expect(declaredBytes(0)).toBe(0);
    expect(declaredBytes(9)).toBe(9);
  });

  it('leaves anything else unknown instead of guessing', () => {
    for (const value of [
      null,
      undefined,
      '',
      '1.5 GB',
      '-1',
      '1e3',
      -1,
      1.5,
      2 ** 60,
      '9'.repeat(16),
    ])
      expect(declaredBytes(value)).toBeNull();
  });
});
