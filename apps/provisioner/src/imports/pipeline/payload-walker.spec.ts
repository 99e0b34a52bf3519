import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../../test/support/dropzone-fixture';
import { walkPayload } from './payload-walker';

describe('walkPayload', () => {
  let root: string;
  beforeEach(() => {
    root = tempDir('walk');
  });

  it('lists regular files with sizes, depth first, as POSIX relative paths', async () => {
    mkdirSync(join(root, 'a/b/c'), { recursive: true });
    writeFileSync(join(root, 'top.txt'), '12345');
    writeFileSync(join(root, 'a/b/c/deep.bin'), '');
    mkdirSync(join(root, 'empty'));
    const { files, problems } = await walkPayload(root);
    expect(problems).toEqual([]);
    expect([...files.keys()].sort()).toEqual(['a/b/c/deep.bin', 'top.txt']);
    expect(files.get('top.txt')?.size).toBe(5);
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
    const { files, problems } = await walkPayload(root);
    expect([...files.keys()]).toEqual(['ok.txt']);
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
    const { files } = await walkPayload(root);
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
    const { files } = await walkPayload(root);
    // The test's process owns the files: only the owner bits apply to it.
    expect(files.get('owner-only')?.readable).toBe(true);
    expect(files.get('others-only')?.readable).toBe(false);
    expect(files.get('none')?.readable).toBe(false);
  });
});
