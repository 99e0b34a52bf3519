import { objectFingerprint, PlannedFiles } from './planned-files';

const STATS = { size: 1, ino: 1, dev: 0, mtimeMs: 0, ctimeMs: 0 };

describe('PlannedFiles: the versions of a remote dataset', () => {
  it('gives back every ETag by index: MD5 ones packed, any other kept as it is', () => {
    const files = new PlannedFiles();
    const md5 = (i: number) => i.toString(16).padStart(32, '0');
    for (let i = 0; i < 5000; i++) {
      expect(files.add(`f${i}`)).toBe(true);
      files.setWalked(i, STATS, true, md5(i));
    }
    files.setWalked(7, STATS, true, '0123456789abcdef0123456789abcdef-3');
    files.setWalked(8, STATS, true, 'not-hex');
    expect(files.version(4999)).toBe(md5(4999));
    expect(files.version(0)).toBe(md5(0));
    expect(files.version(7)).toBe('0123456789abcdef0123456789abcdef-3');
    expect(files.version(8)).toBe('not-hex');
    files.setWalked(8, STATS, true, md5(8));
    expect(files.version(8)).toBe(md5(8));
  });

  it('fingerprints an ETag as a safe integer, differently for different ETags', () => {
    const a = objectFingerprint('d41d8cd98f00b204e9800998ecf8427e');
    expect(Number.isSafeInteger(a)).toBe(true);
    expect(objectFingerprint('d41d8cd98f00b204e9800998ecf8427e')).toBe(a);
    expect(objectFingerprint('d41d8cd98f00b204e9800998ecf8427f')).not.toBe(a);
  });
});
