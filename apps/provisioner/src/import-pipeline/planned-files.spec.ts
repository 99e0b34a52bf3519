import { createHash } from 'node:crypto';
import { prng } from '../../../../scripts/lib/prng';
import { PlannedFiles } from './planned-files';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const md5 = (text: string) => createHash('md5').update(text).digest('hex');

describe('PlannedFiles', () => {
  it('gives back every path and digest in the order added, through growth', () => {
    const files = new PlannedFiles();
    const paths = Array.from({ length: 5000 }, (_, i) => `d-${i % 37}/sub ${i % 5}/f-${i}.dat`);
    for (const path of paths) {
      expect(files.add(path)).toBe(true);
      files.setDigest('sha256', files.count - 1, sha(path));
    }
    expect(files.count).toBe(paths.length);
    paths.forEach((path, i) => {
      expect(files.path(i)).toBe(path);
      expect(files.indexOf(path)).toBe(i);
      expect(files.digestHex('sha256', i)).toBe(sha(path));
      expect(files.digestIs('sha256', i, sha(path))).toBe(true);
      expect(files.digestIs('sha256', i, sha(`${path}!`))).toBe(false);
    });
    expect(files.indexOf('d-1/sub 1/f-0.dat')).toBe(-1);
    expect(files.indexOf('nowhere/f-1.dat')).toBe(-1);
  });

  it('refuses a path added twice and keeps the first', () => {
    const files = new PlannedFiles();
    expect(files.add('a/b.txt')).toBe(true);
    expect(files.add('c.txt')).toBe(true);
    expect(files.add('a/b.txt')).toBe(false);
    expect(files.count).toBe(2);
    expect(files.path(1)).toBe('c.txt');
    expect(files.indexOf('a/b.txt')).toBe(0);
  });

  it('holds unicode names and directories, top-level files and an empty plan', () => {
    const empty = new PlannedFiles();
    expect(empty.count).toBe(0);
    expect(empty.indexOf('a')).toBe(-1);
    expect(empty.sortedByPath()).toEqual(new Uint32Array(0));
    const files = new PlannedFiles();
    const paths = ['ü/é.txt', 'top', '日本/語/ファイル', 'emoji/😀.bin', 'ü/e\u0301.txt'];
    for (const path of paths) files.add(path);
    paths.forEach((path, i) => expect(files.path(i)).toBe(path));
    expect(files.indexOf('ü/e\u0301.txt')).toBe(4);
    expect(files.indexOf('ü/é.txt')).toBe(0);
  });

  it('sorts as JavaScript compares the paths, across directories and surrogate pairs', () => {
    const paths = [
      'b',
      'a/b',
      'a-x/c',
      'a/b/c',
      'a',
      'x/\uffff',
      'x/😀',
      'x/\ue000z',
      'x/z',
      'a/\u00e9',
      'a.b/c',
      'a/b.c',
    ];
    const files = new PlannedFiles();
    for (const path of paths) files.add(path);
    const sorted = [...files.sortedByPath()].map((i) => files.path(i));
    expect(sorted).toEqual([...paths].sort());
  });

  it('sorts as JavaScript does when directories nest, names meet subdirectory names and files sit at the top', () => {
    // Segments chosen to sort on both sides of '/' (0x2f): '-' and '.' before it, '0' and
    // letters after it, a name equal to a subdirectory's, and characters past U+FFFF.
    const segments = ['a', 'a-x', 'a.b', 'a0', 'b', '\u00e9', '😀', '\uffff', 'a b'];
    const random = prng(39);
    const pick = () => segments[Math.floor(random() * segments.length)];
    const paths = new Set<string>();
    while (paths.size < 3000) {
      const depth = 1 + Math.floor(random() * 4);
      paths.add(
        Array.from({ length: depth }, pick).join('/') + (random() < 0.5 ? '' : `.${pick()}`),
      );
    }
    const files = new PlannedFiles();
    for (const path of paths) files.add(path);
    const sorted = [...files.sortedByPath()].map((i) => files.path(i));
    expect(sorted).toEqual([...paths].sort());
  });

  it('keeps stat fields, flags, both digests and a second device', () => {
    const files = new PlannedFiles({ times: true });
    files.add('one');
    files.add('two');
    files.add('three');
    files.setWalked(0, { size: 5, ino: 10, dev: 7, mtimeMs: 1.5, ctimeMs: 2.5 }, true);
    files.setWalked(2, { size: 2 ** 40, ino: 2 ** 50, dev: 8, mtimeMs: 3, ctimeMs: 4 }, false);
    expect([files.walked(0), files.walked(1), files.walked(2)]).toEqual([true, false, true]);
    expect([files.readable(0), files.readable(2)]).toEqual([true, false]);
    expect([files.devOf(0), files.devOf(2)]).toEqual([7, 8]);
    expect([files.size[2], files.inoOf(2), files.mtimeMs![0], files.ctimeMs![0]]).toEqual([
      2 ** 40,
      2 ** 50,
      1.5,
      2.5,
    ]);
    // The inode column widened for 2 ** 50 and kept the 32-bit one written before it.
    expect(files.inoOf(0)).toBe(10);
    files.setDigest('md5', 1, md5('x'));
    expect(files.digestHex('md5', 1)).toBe(md5('x'));
    expect(files.listAgain(1)).toBe(true);
    expect(files.listAgain(1)).toBe(false);
    expect(files.listedTwice(0)).toBe(false);
    expect(new PlannedFiles().mtimeMs).toBeNull();
  });
});
