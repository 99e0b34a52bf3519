import { objectFingerprint, ObjectVersions } from './object-versions';

describe('ObjectVersions', () => {
  it('gives back every ETag by index: MD5 ones packed, any other kept as it is', () => {
    const versions = new ObjectVersions();
    const md5 = (i: number) => i.toString(16).padStart(32, '0');
    for (let i = 0; i < 5000; i++) versions.set(i, md5(i));
    versions.set(7, '0123456789abcdef0123456789abcdef-3');
    versions.set(8, 'not-hex');
    expect(versions.get(4999)).toBe(md5(4999));
    expect(versions.get(0)).toBe(md5(0));
    expect(versions.get(7)).toBe('0123456789abcdef0123456789abcdef-3');
    expect(versions.get(8)).toBe('not-hex');
    versions.set(8, md5(8));
    expect(versions.get(8)).toBe(md5(8));
  });

  it('fingerprints an ETag as a safe integer, differently for different ETags', () => {
    const a = objectFingerprint('d41d8cd98f00b204e9800998ecf8427e');
    expect(Number.isSafeInteger(a)).toBe(true);
    expect(objectFingerprint('d41d8cd98f00b204e9800998ecf8427e')).toBe(a);
    expect(objectFingerprint('d41d8cd98f00b204e9800998ecf8427f')).not.toBe(a);
  });
});
