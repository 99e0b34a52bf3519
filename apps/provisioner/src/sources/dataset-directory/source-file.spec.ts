import { linkSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeSpecialFile, tempDir } from '../../../test/support/dropzone-fixture';
import { pinDirectory, pinDirectorySync } from './pinned-directory';
import {
  FileRules,
  isProblem,
  openSourceFile,
  readSourceChunksSync,
  readSourceFileSync,
  SourceProblem,
} from './source-file';

const RULES: FileRules = { maxBytes: 100, setting: 'TEST_MAX', singleLink: true };

function refusedCode(result: unknown): string | null {
  return isProblem(result as SourceProblem) ? (result as SourceProblem).code : null;
}

describe('reading a source file', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir('source-file');
    writeFileSync(join(dir, 'plain.json'), '{"a":1}');
  });

  it('reads a regular file within the cap; null when absent', () => {
    expect(readSourceFileSync(join(dir, 'plain.json'), 'plain.json', RULES)).toEqual(
      Buffer.from('{"a":1}'),
    );
    expect(readSourceFileSync(join(dir, 'nope.json'), 'nope.json', RULES)).toBeNull();
  });

  it.each([
    [
      'a link to a file',
      (p: string, d: string) => symlinkSync(join(d, 'plain.json'), p),
      'symlink',
    ],
    ['a dangling link', (p: string) => symlinkSync('/nonexistent/x', p), 'symlink'],
    [
      'a chain of links',
      (p: string, d: string) => {
        symlinkSync(join(d, 'plain.json'), join(d, 'hop'));
        symlinkSync(join(d, 'hop'), p);
      },
      'symlink',
    ],
    ['a link to a directory', (p: string) => symlinkSync('/etc', p), 'symlink'],
    ['a FIFO', (p: string) => makeSpecialFile(p, 'fifo'), 'fifo'],
    ['a socket', (p: string) => makeSpecialFile(p, 'socket'), 'socket'],
    ['a directory', (p: string) => mkdirSync(p), 'directory'],
    ['a hard link', (p: string, d: string) => linkSync(join(d, 'plain.json'), p), 'hard_link'],
    ['over the cap', (p: string) => writeFileSync(p, 'x'.repeat(101)), 'too_large'],
  ])('refuses %s without opening it, and says why', (_, make, code) => {
    const path = join(dir, 'meta.json');
    make(path, dir);
    const result = readSourceFileSync(path, 'meta.json', RULES);
    expect(refusedCode(result)).toBe(code);
    expect((result as SourceProblem).message).toMatch(/^meta\.json /);
  });

  it('names the setting that raises the cap', () => {
    writeFileSync(join(dir, 'big'), 'x'.repeat(500));
    expect(readSourceFileSync(join(dir, 'big'), 'big', RULES)).toMatchObject({
      code: 'too_large',
      message: 'big is 500 bytes, over the limit of 100 (TEST_MAX)',
    });
  });

  it('accepts hard links where the rules allow them (payload files)', () => {
    linkSync(join(dir, 'plain.json'), join(dir, 'linked'));
    const rules = { ...RULES, singleLink: false };
    expect(readSourceFileSync(join(dir, 'linked'), 'linked', rules)).toEqual(
      Buffer.from('{"a":1}'),
    );
  });

  it('streams in chunks and stops at the cap', () => {
    writeFileSync(join(dir, 'manifest'), 'y'.repeat(300 * 1024));
    const seen: number[] = [];
    const rules = { ...RULES, maxBytes: 1024 * 1024 };
    expect(
      readSourceChunksSync(join(dir, 'manifest'), 'manifest', rules, (c) => seen.push(c.length)),
    ).toBe('read');
    expect(seen.reduce((a, b) => a + b, 0)).toBe(300 * 1024);
    expect(seen.length).toBeGreaterThan(1);
    const small = { ...RULES, maxBytes: 300 * 1024 - 1 };
    expect(
      readSourceChunksSync(join(dir, 'manifest'), 'manifest', small, () => undefined),
    ).toMatchObject({
      code: 'too_large',
    });
  });

  it('opens asynchronously with the same verdicts (a FIFO never blocks the open)', async () => {
    makeSpecialFile(join(dir, 'pipe'), 'fifo');
    expect(refusedCode(await openSourceFile(join(dir, 'pipe'), 'pipe', RULES))).toBe('fifo');
    const opened = await openSourceFile(join(dir, 'plain.json'), 'plain.json', RULES);
    expect(isProblem(opened!)).toBe(false);
    if (opened && !isProblem(opened)) await opened.handle.close();
  });
});

describe('pinned directories', () => {
  it('refuses a link (to a directory, dangling) and a non-directory; null when absent', async () => {
    const base = tempDir('pinned');
    mkdirSync(join(base, 'real'));
    symlinkSync(join(base, 'real'), join(base, 'link'));
    symlinkSync('/nonexistent', join(base, 'dangling'));
    writeFileSync(join(base, 'file'), '');
    expect(refusedCode(pinDirectorySync(join(base, 'link'), 'link'))).toBe('symlink');
    expect(refusedCode(pinDirectorySync(join(base, 'dangling'), 'dangling'))).toBe('symlink');
    expect(refusedCode(pinDirectorySync(join(base, 'file'), 'file'))).toBe('not_a_directory');
    expect(pinDirectorySync(join(base, 'absent'), 'absent')).toBeNull();
    expect(refusedCode(await pinDirectory(join(base, 'link'), 'link'))).toBe('symlink');
  });

  it('keeps reading the directory it opened after the path is swapped for a link elsewhere', async () => {
    const base = tempDir('pinned');
    mkdirSync(join(base, 'mine'));
    mkdirSync(join(base, 'theirs'));
    writeFileSync(join(base, 'mine/data.txt'), 'mine');
    writeFileSync(join(base, 'theirs/data.txt'), 'theirs');
    for (const pin of [
      pinDirectorySync(join(base, 'mine'), ''),
      await pinDirectory(join(base, 'mine'), ''),
    ]) {
      if (!pin || isProblem(pin)) throw new Error('not pinned');
      renameSync(join(base, 'mine'), join(base, 'mine.moved'));
      symlinkSync(join(base, 'theirs'), join(base, 'mine'));
      expect(readFileSync(`${pin.view}/data.txt`, 'utf8')).toBe('mine');
      await Promise.resolve(pin.close());
      renameSync(join(base, 'mine'), join(base, 'swap.link'));
      renameSync(join(base, 'mine.moved'), join(base, 'mine'));
    }
  });
});
