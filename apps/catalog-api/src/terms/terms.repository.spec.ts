import { escapeLikePattern, indexedMatchFor, LONG_SEARCH_WINDOW } from './terms.repository';

describe('indexedMatchFor', () => {
  it.each(['zq', 'In', '2 ', '0', 'a', '%', 'é', 'ж', '😀'])(
    'finds the rare matches of %p through the 1–2-character substring index',
    (search) => {
      expect(indexedMatchFor(search)).toBe('short');
    },
  );

  it.each(['syn', 'parkinson', 'ic ac', 'x'.repeat(LONG_SEARCH_WINDOW)])(
    'finds those of %p through the trigram index',
    (search) => {
      expect(indexedMatchFor(search)).toBe('trigram');
    },
  );

  it('finds those of a longer search through the trigram index by its first characters', () => {
    expect(indexedMatchFor('x'.repeat(LONG_SEARCH_WINDOW + 1))).toBe('window');
  });
});

describe('escapeLikePattern', () => {
  it('escapes the LIKE wildcards and the escape character', () => {
    expect(escapeLikePattern('100%_\\x')).toBe('100\\%\\_\\\\x');
  });
});
