import { newDataKey, randomSlice } from './random';

describe('randomSlice', () => {
  it('hands out each byte once: thousands of data keys across blocks, all different and unchanged after', () => {
    const keys = Array.from({ length: 5000 }, () => newDataKey());
    const copies = keys.map((key) => Buffer.from(key));
    expect(keys.every((key) => key.length === 32)).toBe(true);
    expect(new Set(keys.map((key) => key.toString('hex'))).size).toBe(keys.length);
    // Drawing more never rewrites what was handed out (a key in use stays what it was).
    for (let i = 0; i < 1000; i++) randomSlice(12);
    expect(keys.every((key, i) => key.equals(copies[i]))).toBe(true);
  });

  it('gives a request larger than its blocks whole bytes of its own', () => {
    const large = randomSlice(64 * 1024);
    expect(large.length).toBe(64 * 1024);
    expect(large.byteOffset === 0 && large.buffer.byteLength >= large.length).toBe(true);
    // Not all one byte value: drawn from the CSPRNG.
    expect(new Set(large).size).toBeGreaterThan(200);
  });
});
