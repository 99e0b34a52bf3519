import { PathHashSet } from './path-hash-set';

describe('PathHashSet', () => {
  it('tells new paths from repeated ones across many growths', () => {
    const set = new PathHashSet();
    const paths = Array.from(
      { length: 200_000 },
      (_, i) => `data/run-${i % 977}/sample_${i}.fastq`,
    );
    expect(paths.every((p) => set.add(p))).toBe(true);
    expect(set.size).toBe(200_000);
    expect(set.add('data/run-5/sample_5.fastq')).toBe(false);
    expect(set.add('data/run-5/sample_5.fastq ')).toBe(true);
  });

  it('matches a second list exactly once per path, and knows when all were matched', () => {
    const set = new PathHashSet();
    for (const p of ['a', 'b', 'c/d']) set.add(p);
    expect(set.match('a')).toBe(true);
    expect(set.match('a')).toBe(false);
    expect(set.match('zzz')).toBe(false);
    expect(set.allMatched).toBe(false);
    expect(set.match('b') && set.match('c/d')).toBe(true);
    expect(set.allMatched).toBe(true);
  });

  it('marks paths found, apart from the matches of a second list', () => {
    const set = new PathHashSet();
    for (const p of ['a', 'b', 'c/d']) set.add(p);
    set.markPresent('a');
    set.markPresent('a');
    set.markPresent('not-listed');
    expect([set.isPresent('a'), set.isPresent('b'), set.isPresent('not-listed')]).toEqual([
      true,
      false,
      false,
    ]);
    expect(set.allPresent).toBe(false);
    expect(set.match('a') && set.match('b')).toBe(true);
    expect(set.match('a')).toBe(false);
    set.markPresent('b');
    set.markPresent('c/d');
    expect(set.allPresent).toBe(true);
    expect(set.allMatched).toBe(false);
    expect(set.match('c/d')).toBe(true);
    expect(set.allMatched).toBe(true);
  });
});
