import { ResponseCache } from './response-cache';

describe('ResponseCache', () => {
  const entry = (body: string) => ({ body: Buffer.from(body), etag: `"${body}"` });
  const bodyOf = (cache: ResponseCache, key: string) => cache.get(key)?.body.toString();

  it('evicts the least recently used entries when over its byte budget', () => {
    const cache = new ResponseCache(10);
    cache.set('a', entry('aaaa'));
    cache.set('b', entry('bbbb'));
    expect(bodyOf(cache, 'a')).toBe('aaaa'); // a is now the most recent
    cache.set('c', entry('cccc'));
    expect(cache.get('b')).toBeUndefined();
    expect(bodyOf(cache, 'a')).toBe('aaaa');
    expect(bodyOf(cache, 'c')).toBe('cccc');
  });

  it('does not keep a body larger than the whole budget', () => {
    const cache = new ResponseCache(3);
    cache.set('big', entry('too long'));
    expect(cache.get('big')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('counts bytes, not characters', () => {
    const cache = new ResponseCache(6);
    cache.set('a', entry('ééé')); // 3 characters, 6 bytes
    cache.set('b', entry('b'));
    expect(cache.get('a')).toBeUndefined();
    expect(bodyOf(cache, 'b')).toBe('b');
  });

  it('replaces an entry under the same key without double counting', () => {
    const cache = new ResponseCache(8);
    cache.set('a', entry('1234'));
    cache.set('a', entry('5678'));
    cache.set('b', entry('abcd'));
    expect(bodyOf(cache, 'a')).toBe('5678');
    expect(bodyOf(cache, 'b')).toBe('abcd');
  });
});
