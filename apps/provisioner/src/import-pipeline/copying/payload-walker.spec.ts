import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../../test/support/dropzone-fixture';
import { walkOnEventLoop } from './event-loop-walk';
import { DirectoryWalker, walkPayload } from './payload-walker';
import { CopyThreadPool } from './copy-thread-pool';
import { walkOnThreads } from './threaded-walk';
import { REAL_IO_MS } from '../../../../../test/support/timeouts';

// Real threads: seconds on a loaded 2-core machine.
jest.setTimeout(REAL_IO_MS);

const pool = new CopyThreadPool(2);
// Loading the threads' TypeScript takes seconds on a busy machine: not the tests' time.
beforeAll(() => pool.start(), 30_000);
afterAll(() => pool.close());

describe.each([
  ['on the event loop', (): DirectoryWalker => walkOnEventLoop],
  ['on the copy threads', (): DirectoryWalker => walkOnThreads(pool)],
])('walkPayload %s', (_, walker) => {
  let root: string;
  beforeEach(() => {
    root = tempDir('walk');
  });
  const walkPayloadOf = (dir: string) => walkPayload(dir, walker());

  it('lists regular files with sizes, depth first, as POSIX relative paths', async () => {
    mkdirSync(join(root, 'a/b/c'), { recursive: true });
    writeFileSync(join(root, 'top.txt'), '12345');
    writeFileSync(join(root, 'a/b/c/deep.bin'), '');
    mkdirSync(join(root, 'empty'));
    const { files, problems: list } = await walkPayloadOf(root);
    const problems = list.details();
    expect(problems).toEqual([]);
    expect([...files.keys()].sort()).toEqual(['a/b/c/deep.bin', 'top.txt']);
    const top = statSync(join(root, 'top.txt'));
    expect(files.get('top.txt')).toEqual({
      path: 'top.txt',
      size: 5,
      mtimeMs: top.mtimeMs,
      ctimeMs: top.ctimeMs,
      dev: top.dev,
      ino: top.ino,
      readable: true,
    });
    expect(files.get('a/b/c/deep.bin')).toMatchObject({
      size: 0,
      ino: statSync(join(root, 'a/b/c/deep.bin')).ino,
    });
  });

  it('reports every symlink, FIFO, bad name and reserved name, without following links', async () => {
    mkdirSync(join(root, 'dir'));
    writeFileSync(join(root, 'ok.txt'), 'x');
    symlinkSync('/etc', join(root, 'dir/link-to-dir'));
    symlinkSync('/nonexistent', join(root, 'broken'));
    execFileSync('mkfifo', [join(root, 'pipe')]);
    writeFileSync(join(root, 'line\nbreak'), 'x');
    mkdirSync(join(root, '.provisioner'));
    writeFileSync(Buffer.concat([Buffer.from(`${root}/bad`), Buffer.from([0xff, 0xfe])]), 'x');
    // A name that really holds U+FFFD is valid UTF-8: listed, not taken for a bad one.
    writeFileSync(join(root, 'dir/odd-\uFFFD.txt'), 'x');
    const { files, problems: list } = await walkPayloadOf(root);
    const problems = list.details();
    expect([...files.keys()].sort()).toEqual(['dir/odd-\uFFFD.txt', 'ok.txt']);
    const found = problems.map((p) => `${p.code}:${p.path}`).sort();
    expect(found).toEqual(
      [
        'control_character:line\\x0abreak',
        'fifo:pipe',
        'invalid_utf8:bad\\xff\\xfe',
        'reserved_name:.provisioner',
        'symlink:broken',
        'symlink:dir/link-to-dir',
      ].sort(),
    );
  });

  it('records the device and inode of each file (what the copy must open)', async () => {
    writeFileSync(join(root, 'a.txt'), 'a');
    const { files } = await walkPayloadOf(root);
    const stats = statSync(join(root, 'a.txt'));
    expect(files.get('a.txt')).toMatchObject({ dev: stats.dev, ino: stats.ino });
  });

  it('reads permission bits as access(2) would: the owner bits for the owner, never a wider class', async () => {
    for (const [name, mode] of [
      ['owner-only', 0o400],
      ['others-only', 0o044],
      ['none', 0o000],
    ] as const) {
      writeFileSync(join(root, name), 'x');
      chmodSync(join(root, name), mode);
    }
    const { files } = await walkPayloadOf(root);
    // The test's process owns the files: only the owner bits apply to it.
    expect(files.get('owner-only')?.readable).toBe(true);
    expect(files.get('others-only')?.readable).toBe(false);
    expect(files.get('none')?.readable).toBe(false);
  });

  it('walks many directories at every depth, each file once', async () => {
    const expected: string[] = [];
    for (let d = 0; d < 40; d++)
      for (const sub of ['', '/x', '/x/y']) {
        mkdirSync(join(root, `d${d}${sub}`), { recursive: true });
        writeFileSync(join(root, `d${d}${sub}/f.txt`), `${d}${sub}`);
        expected.push(`d${d}${sub}/f.txt`);
      }
    symlinkSync('/etc/passwd', join(root, 'd39/x/y/link'));
    const { files, problems: list } = await walkPayloadOf(root);
    const problems = list.details();
    expect([...files.keys()].sort()).toEqual(expected.sort());
    expect(files.get('d7/x/f.txt')?.size).toBe('7/x'.length);
    expect(problems).toEqual([expect.objectContaining({ code: 'symlink', path: 'd39/x/y/link' })]);
  });

  it('keeps the first 1,000 of 150,000 problems in one directory and counts them all', async () => {
    // Issue 30: the parts' problems were spread into push(), which overflows the stack. In
    // memory where there is some: 150,000 links take a second there, a minute on a busy disk.
    if (existsSync('/dev/shm')) root = mkdtempSync('/dev/shm/walk-');
    const dir = join(root, 'links');
    mkdirSync(dir);
    for (let i = 0; i < 150_000; i++) symlinkSync('x', join(dir, `l${i}`));
    writeFileSync(join(root, 'ok.txt'), 'x');
    const { files, problems } = await walkPayloadOf(root);
    expect([...files.keys()]).toEqual(['ok.txt']);
    expect(problems.total).toBe(150_000);
    const details = problems.details();
    expect(details).toHaveLength(1001);
    expect(details[999]).toMatchObject({ code: 'symlink' });
    expect(details[1000]).toEqual({
      code: 'more_problems',
      message: '149000 more problem(s) not listed',
    });
    execFileSync('rm', ['-rf', root]);
  });

  it('reports a path nested past MAX_PATH_BYTES by name, without opening it (no ENAMETOOLONG)', async () => {
    // 250-byte names, 20 levels: 5,020 bytes, past the 4,000 allowed and Linux's PATH_MAX.
    // One relative step at a time: no absolute path that deep can be named.
    const step = `mkdir ${'n'.repeat(250)} && cd ${'n'.repeat(250)}`;
    execFileSync('bash', ['-c', Array(20).fill(step).join(' && ')], { cwd: root });
    const { files, problems } = await walkPayloadOf(root);
    expect(files.size).toBe(0);
    expect(problems.details()).toEqual([
      expect.objectContaining({
        code: 'name_too_long',
        message: 'path longer than 4000 bytes (nested too deep)',
      }),
    ]);
  });

  it('fails as source_changed when a directory is swapped for a link before it is read', async () => {
    mkdirSync(join(root, 'sub'));
    writeFileSync(join(root, 'sub/inside.txt'), 'x');
    mkdirSync(join(root, 'elsewhere'));
    const inner = walker();
    // Between the listing of the root (which saw a directory) and the walk of sub itself.
    const swapping: DirectoryWalker = (dir, directories) => {
      if (directories.some((d) => d.relative === 'sub')) {
        renameSync(join(root, 'sub'), join(root, 'sub.old'));
        symlinkSync(join(root, 'elsewhere'), join(root, 'sub'));
      }
      return inner(dir, directories);
    };
    await expect(walkPayload(root, swapping)).rejects.toMatchObject({
      name: 'ImportTransientError',
      code: 'source_changed',
      details: [expect.objectContaining({ path: 'sub' })],
    });
  });
});
