import express from 'express';
import type { Request } from 'express';
import { KEY_PARAMETER_NAMES } from '../../../test/support/hostile-input';
import { extractApiKey } from './credentials';
import { isApiKeyParameter, queryCarriesApiKey, redactApiKeys } from './query-key';

const KEY = 's3cret-key-value';

/** The query as Express hands it to the guard (its own parser, with its settings). */
function expressQuery(url: string): Request['query'] {
  const parse = express().get('query parser fn') as (query: string) => Request['query'];
  const start = url.indexOf('?');
  return parse(start === -1 ? '' : url.slice(start + 1));
}

describe('isApiKeyParameter', () => {
  it.each(KEY_PARAMETER_NAMES)('recognises %s', (name) => {
    expect(isApiKeyParameter(name)).toBe(true);
  });

  it('leaves other names alone, including names that contain the word', () => {
    for (const name of ['page', 'MY_API_KEY', 'API_KEYS', 'key', 'api', '%ZZ', '']) {
      expect(isApiKeyParameter(name)).toBe(false);
    }
  });
});

describe('redactApiKeys', () => {
  it.each(KEY_PARAMETER_NAMES)(
    'hides the value sent as %s, wherever it is in the query',
    (name) => {
      const url = `/api/projects?page=2&${name}=${KEY}&fields=name`;
      expect(redactApiKeys(url)).toBe(`/api/projects?page=2&${name}=[REDACTED]&fields=name`);
      expect(queryCarriesApiKey(url)).toBe(true);
    },
  );

  it('hides every occurrence, and keeps URLs without a key as they are', () => {
    expect(redactApiKeys(`/x?API_KEY=a&API%5FKEY=b`)).toBe(
      '/x?API_KEY=[REDACTED]&API%5FKEY=[REDACTED]',
    );
    for (const url of ['/x', '/x?', '/x?page=1', '/x?MY_API_KEY=visible', '/x?API_KEY']) {
      expect(redactApiKeys(url)).toBe(url);
    }
    expect(queryCarriesApiKey('/x?MY_API_KEY=visible')).toBe(false);
    expect(queryCarriesApiKey('/x')).toBe(false);
  });

  it('redacts every key that Express would hand to the guard (what is accepted is never logged)', () => {
    const names = [
      ...KEY_PARAMETER_NAMES,
      'API%5FKEY',
      'API_KEY%',
      'API_K%45Y',
      '%61pi_key',
      'page',
    ];
    for (const name of names) {
      const url = `/api/datasets?${name}=${KEY}`;
      const accepted = extractApiKey({ headers: {}, query: expressQuery(url) });
      if (accepted !== undefined) {
        expect(redactApiKeys(url)).not.toContain(KEY);
        expect(queryCarriesApiKey(url)).toBe(true);
      }
    }
    // The encoded form the review found is accepted, so the check above is not vacuous.
    expect(extractApiKey({ headers: {}, query: expressQuery(`/x?API%5FKEY=${KEY}`) })).toBe(KEY);
  });
});
