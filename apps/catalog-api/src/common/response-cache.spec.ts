import { ResponseCache } from './response-cache';

describe('ResponseCache', () => {
  const entry = (body: string) => ({ body, etag: `"${body}"` });

  it('evicts the least recently used entries when over its byte budget', () => {
    const cache = new ResponseCache(10);
    cache.set('a', entry('aaaa'));
    cache.set('b', entry('bbbb'));
    expect(cache.get('a')?.body).toBe('aaaa'); // a is now the most recent
    cache.set('c', entry('cccc'));
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.body).toBe('aaaa');
    expect(cache.get('c')?.body).toBe('cccc');
  });

  it('does not keep a body larger than the whole budget', () => {
    const cache = new ResponseCache(3);
    cache.set('big', entry('too long'));
    expect(cache.get('big')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('replaces an entry under the same key without double counting', () => {
    const cache = new ResponseCache(8);
    cache.set('a', entry('1234'));
    cache.set('a', entry('5678'));
    cache.set('b', entry('abcd'));
    expect(cache.get('a')?.body).toBe('5678');
    expect(cache.get('b')?.body).toBe('abcd');
  });
});
