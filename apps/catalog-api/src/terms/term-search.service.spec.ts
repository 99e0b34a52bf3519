import { escapeLikePattern, needsShortGramIndex } from './term-search.service';

describe('needsShortGramIndex', () => {
  it.each(['zq', 'In', '2 ', '0', '%', '-', 'é', 'ж', '😀'])(
    'sends %p through the 1–2-character substring index',
    (search) => {
      expect(needsShortGramIndex(search)).toBe(true);
    },
  );

  it.each(['a', 'Q', 'syn', 'parkinson', 'ic ac'])('leaves %p to the other indexes', (search) => {
    expect(needsShortGramIndex(search)).toBe(false);
  });
});

describe('escapeLikePattern', () => {
  it('escapes the LIKE wildcards and the escape character', () => {
    expect(escapeLikePattern('100%_\\x')).toBe('100\\%\\_\\\\x');
  });
});
