import {
  CachedResponse,
  ENTRY_OVERHEAD_BYTES,
  ownedCopy,
  ResponseCache,
  stringBytes,
} from './response-cache';

describe('ResponseCache', () => {
  const entry = (body: string) => ({
    body: [Buffer.from(body)],
    bytes: Buffer.byteLength(body),
    etag: `"${body}"`,
  });
  const bodyOf = (cache: ResponseCache, key: string) => cache.get(key)?.body.join('');
  /** What an entry of a 4-byte body under a 1-character key costs. */
  const SMALL = ENTRY_OVERHEAD_BYTES + stringBytes('a') + 4 + stringBytes('"aaaa"');
  const roomFor = (entries: number) =>
    new ResponseCache({ maxEntries: 1000, maxBytes: entries * SMALL });

  it('evicts the least recently used entries when over its byte budget', () => {
    const cache = roomFor(2);
    cache.set('a', entry('aaaa'));
    cache.set('b', entry('bbbb'));
    expect(bodyOf(cache, 'a')).toBe('aaaa'); // a is now the most recent
    cache.set('c', entry('cccc'));
    expect(cache.get('b')).toBeUndefined();
    expect(bodyOf(cache, 'a')).toBe('aaaa');
    expect(bodyOf(cache, 'c')).toBe('cccc');
  });

  it('evicts the least recently used entries when over its number of entries', () => {
    const cache = new ResponseCache({ maxEntries: 2, maxBytes: 1024 * 1024 });
    cache.set('a', entry('aaaa'));
    cache.set('b', entry('bbbb'));
    cache.get('a');
    cache.set('c', entry('cccc'));
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect(bodyOf(cache, 'a')).toBe('aaaa');
  });

  it('keeps the order of use through hits, replacements and evictions', () => {
    const cache = new ResponseCache({ maxEntries: 4, maxBytes: 1024 * 1024 });
    for (const key of ['a', 'b', 'c', 'd']) cache.set(key, entry(key.repeat(4)));
    cache.get('d'); // already the newest
    cache.get('a'); // now the newest: b, c, d, a
    cache.set('c', entry('CCCC')); // replaced, so the newest: b, d, a, c
    cache.set('e', entry('eeee'));
    expect(cache.get('b')).toBeUndefined();
    cache.set('f', entry('ffff'));
    expect(cache.get('d')).toBeUndefined();
    expect(cache.size).toBe(4);
    expect(['a', 'c', 'e', 'f'].map((key) => bodyOf(cache, key))).toEqual([
      'aaaa',
      'CCCC',
      'eeee',
      'ffff',
    ]);
    // Read in that order, a is now the oldest again.
    cache.set('g', entry('gggg'));
    expect(cache.get('a')).toBeUndefined();
    expect(bodyOf(cache, 'c')).toBe('CCCC');
  });

  it('counts keys, tags, extras and a per-entry overhead, not only bodies', () => {
    // Small bodies under long keys (unique URLs): counting bodies alone let them grow without bound.
    const cache = new ResponseCache({ maxEntries: 1000, maxBytes: 10 * ENTRY_OVERHEAD_BYTES });
    for (let i = 0; i < 100; i++) cache.set(`/api/partners?x=${'y'.repeat(1000)}${i}`, entry('{}'));
    expect(cache.size).toBeLessThan(10);
    expect(cache.heldBytes).toBeLessThanOrEqual(10 * ENTRY_OVERHEAD_BYTES);

    const withExtras = new ResponseCache<CachedResponse & { extra: string }>(
      { maxEntries: 1000, maxBytes: 3 * SMALL + 2000 },
      (e) => stringBytes(e.extra),
    );
    withExtras.set('a', { ...entry('aaaa'), extra: 'x'.repeat(1000) });
    withExtras.set('b', { ...entry('bbbb'), extra: 'x'.repeat(1000) });
    expect(withExtras.get('a')).toBeUndefined();
    expect(withExtras.heldBytes).toBe(SMALL + 2000);
  });

  it('does not keep an entry larger than the whole budget', () => {
    const cache = roomFor(1);
    cache.set('big', entry('too long'));
    expect(cache.get('big')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('counts bytes, not characters', () => {
    const cache = new ResponseCache({ maxEntries: 1000, maxBytes: 2 * SMALL });
    cache.set('a', entry('éééé')); // 4 characters, 8 bytes
    cache.set('b', entry('bbbb'));
    expect(cache.get('a')).toBeUndefined();
    expect(bodyOf(cache, 'b')).toBe('bbbb');
  });

  it('replaces an entry under the same key without double counting', () => {
    const cache = roomFor(2);
    cache.set('a', entry('1234'));
    cache.set('a', entry('5678'));
    cache.set('b', entry('abcd'));
    expect(bodyOf(cache, 'a')).toBe('5678');
    expect(bodyOf(cache, 'b')).toBe('abcd');
    expect(cache.heldBytes).toBe(2 * SMALL);
  });
});

describe('ownedCopy', () => {
  it('holds the bytes in an allocation of their own, never a slice of the shared pool', () => {
    const body = ownedCopy(Buffer.from('{"a":"é"}'));
    expect(body.toString()).toBe('{"a":"é"}');
    expect(body.buffer.byteLength).toBe(body.length);
    // What it replaces: a short Buffer.from is a view of an 8 KiB pool slab.
    expect(Buffer.from(body).buffer.byteLength).toBeGreaterThan(body.length);
  });
});
