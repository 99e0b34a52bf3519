import { EntityTags, TAG_ENTRY_OVERHEAD_BYTES } from './entity-tags';
import { stringBytes } from './response-cache';

describe('EntityTags', () => {
  const HEADERS = ['vary', 'Accept', 'cache-control', 'no-cache'];
  /** What a tag `"t1"` costs under a 2-character key. */
  const ONE = TAG_ENTRY_OVERHEAD_BYTES + stringBytes('k1') + stringBytes('"t1"');

  it('keeps tags within its byte bound, the least recently used going first', () => {
    const tags = new EntityTags({ maxEntries: 100, maxBytes: 3 * ONE });
    for (let i = 1; i <= 9; i++) tags.set(`k${i}`, `"t${i}"`, HEADERS, '/r');
    expect(tags.usage()).toEqual({ entries: 3, bytes: 3 * ONE });
    expect(tags.get('k6')).toBeUndefined();
    expect(tags.get('k7')?.etag).toBe('"t7"');
    tags.set('k1', '"t1"', HEADERS, '/r');
    // k7 was read last: k8 went.
    expect(tags.get('k8')).toBeUndefined();
    expect(tags.get('k7')?.etag).toBe('"t7"');
  });

  it('keeps at most maxEntries tags, and none at 0', () => {
    const tags = new EntityTags({ maxEntries: 2, maxBytes: 1024 * 1024 });
    for (let i = 1; i <= 5; i++) tags.set(`k${i}`, `"t${i}"`, HEADERS, '/r');
    expect(tags.usage().entries).toBe(2);
    const none = new EntityTags({ maxEntries: 0, maxBytes: 1024 * 1024 });
    expect(none.set('k1', '"t1"', HEADERS, '/r')).toBe(false);
    expect(none.get('k1')).toBeUndefined();
    expect(none.usage()).toEqual({ entries: 0, bytes: 0 });
  });

  it('shares one copy of each header list, and keeps no tag once 32 different lists are held', () => {
    const tags = new EntityTags({ maxEntries: 100, maxBytes: 1024 * 1024 });
    tags.set('a', '"a"', [...HEADERS], '/r');
    tags.set('b', '"b"', [...HEADERS], '/r');
    expect(tags.get('a')!.headers).toBe(tags.get('b')!.headers);
    for (let i = 0; i < 31; i++)
      expect(tags.set(`x${i}`, '"x"', ['x-n', String(i)], '/r')).toBe(true);
    expect(tags.set('y', '"y"', ['x-n', 'one more'], '/r')).toBe(false);
    expect(tags.get('y')).toBeUndefined();
    expect(tags.set('c', '"c"', [...HEADERS], '/r')).toBe(true);
  });
});
