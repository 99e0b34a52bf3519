import type { Request } from 'express';
import { extractApiKey, extractBearerToken } from './credentials';

type Parts = Pick<Request, 'headers' | 'query'>;

function req(
  headers: Record<string, string | string[] | undefined>,
  query: Record<string, unknown> = {},
): Parts {
  return { headers, query } as unknown as Parts;
}

describe('extractApiKey', () => {
  it('reads the X-API-Key header', () => {
    expect(extractApiKey(req({ 'x-api-key': 'header-key' }))).toBe('header-key');
  });

  it('reads the older API_KEY query parameter', () => {
    expect(extractApiKey(req({}, { API_KEY: 'query-key' }))).toBe('query-key');
  });

  it('lets the header win when both are sent', () => {
    expect(extractApiKey(req({ 'x-api-key': 'header-key' }, { API_KEY: 'query-key' }))).toBe(
      'header-key',
    );
  });

  it('treats an empty header as absent and falls back to the query', () => {
    expect(extractApiKey(req({ 'x-api-key': '' }, { API_KEY: 'query-key' }))).toBe('query-key');
  });

  it('returns undefined when both are empty or missing', () => {
    expect(extractApiKey(req({ 'x-api-key': '' }, { API_KEY: '' }))).toBeUndefined();
    expect(extractApiKey(req({}))).toBeUndefined();
  });

  it('does not guess between repeated values (arrays count as no key)', () => {
    expect(extractApiKey(req({ 'x-api-key': ['a', 'b'] }))).toBeUndefined();
    expect(extractApiKey(req({}, { API_KEY: ['a', 'b'] }))).toBeUndefined();
  });

  it('ignores a nested query object and a request without a parsed query', () => {
    expect(extractApiKey(req({}, { API_KEY: { nested: 'x' } }))).toBeUndefined();
    expect(extractApiKey({ headers: {} } as unknown as Parts)).toBeUndefined();
  });

  it('only knows the exact query name API_KEY', () => {
    expect(extractApiKey(req({}, { api_key: 'lower' }))).toBeUndefined();
  });
});

describe('extractBearerToken', () => {
  const bearer = (authorization?: string | string[]) =>
    extractBearerToken({ headers: { authorization } } as unknown as Pick<Request, 'headers'>);

  it('reads the token of a Bearer header, whatever the scheme case', () => {
    expect(bearer('Bearer abc.def.ghi')).toBe('abc.def.ghi');
    expect(bearer('bearer tok')).toBe('tok');
    expect(bearer('Bearer   tok  ')).toBe('tok');
  });

  it('returns undefined for other schemes, a missing token or a token with spaces', () => {
    expect(bearer('Basic dXNlcjpwYXNz')).toBeUndefined();
    expect(bearer('Bearer')).toBeUndefined();
    expect(bearer('Bearer ')).toBeUndefined();
    expect(bearer('Bearer two tokens')).toBeUndefined();
    expect(bearer(undefined)).toBeUndefined();
  });
});
