import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../../test/support/dropzone-fixture';
import { allocAligned, DIRECT_IO_ALIGNMENT } from './direct-object-writer';
import { openLocalObject } from './local-object';
import { cachedBytes } from '../../../test/support/page-cache';

/** The flags of every openSync call made while `work` runs. */
function openFlags(work: () => void): number[] {
  const flags: number[] = [];
  const nodeFs = jest.requireActual<typeof fs>('node:fs');
  const real = nodeFs.openSync;
  const spy = jest.spyOn(nodeFs, 'openSync').mockImplementation((path, how, mode) => {
    flags.push(typeof how === 'number' ? how : -1);
    return real(path, how, mode);
  });
  try {
    work();
  } finally {
    spy.mockRestore();
  }
  return flags;
}

describe('direct object writes (openLocalObject with direct)', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir('direct-writes');
  });

  it('writes page-aligned chunks past the page cache, the last partial block padded and cut', () => {
    const content = randomBytes(3 * 1024 * 1024 + 123);
    const buffer = allocAligned(1024 * 1024);
    const path = join(dir, 'large.bin');
    const flags = openFlags(() => {
      const writer = openLocalObject(path, 'area', true);
      for (let at = 0; at < content.length; at += buffer.length) {
        const n = content.copy(buffer, 0, at, at + buffer.length);
        writer.write(buffer.subarray(0, n));
      }
      writer.commit();
    });
    expect(flags).toHaveLength(1);
    expect(flags[0] & fs.constants.O_DIRECT).toBe(fs.constants.O_DIRECT);
    expect(cachedBytes(path)).toBe(0);
    expect(fs.readFileSync(path).equals(content)).toBe(true);
    expect(fs.statSync(path).mode & 0o777).toBe(0o444);
  });

  it('gathers chunks of any size and memory into whole blocks, keeping every byte in order', () => {
    const sizes = [1, 4095, 4097, 300_000, DIRECT_IO_ALIGNMENT, 70_000, 3];
    const content = randomBytes(sizes.reduce((a, b) => a + b, 0));
    const path = join(dir, 'odd.bin');
    const writer = openLocalObject(path, 'area', true);
    let at = 0;
    for (const size of sizes) {
      // Plain Buffers: malloc'd memory, never page-aligned.
      writer.write(Buffer.from(content.subarray(at, at + size)));
      at += size;
    }
    writer.commit();
    expect(cachedBytes(path)).toBe(0);
    expect(fs.readFileSync(path).equals(content)).toBe(true);
  });

  it('writes whole-block files without cutting and empty files empty', () => {
    const whole = randomBytes(8 * DIRECT_IO_ALIGNMENT);
    const wholePath = join(dir, 'whole.bin');
    const writer = openLocalObject(wholePath, 'area', true);
    writer.write(whole);
    writer.commit();
    expect(fs.readFileSync(wholePath).equals(whole)).toBe(true);

    const emptyPath = join(dir, 'empty.bin');
    openLocalObject(emptyPath, 'area', true).commit();
    expect(fs.statSync(emptyPath).size).toBe(0);
  });

  it('refuses to write over an existing object and reports a removed area, as buffered objects do', () => {
    const path = join(dir, 'exists.bin');
    fs.writeFileSync(path, 'x');
    expect(() => openLocalObject(path, 'area', true)).toThrow(
      expect.objectContaining({ code: 'EEXIST' }),
    );
    expect(() => openLocalObject(join(dir, 'gone/x.bin'), 'gone-area', true)).toThrow(
      'staging area gone-area was removed',
    );
  });

  it('on a filesystem that refuses O_DIRECT, removes the file the refused open created and writes through the cache', () => {
    jest.isolateModules(() => {
      // Fresh modules: the refusal is remembered per thread, as it is one storage root.
      const nodeFs = jest.requireActual<typeof fs>('node:fs');
      const { openLocalObject: open } =
        jest.requireActual<typeof import('./local-object')>('./local-object');
      const real = nodeFs.openSync;
      // Linux creates the file, then finds the filesystem cannot do O_DIRECT (do_dentry_open).
      const spy = jest.spyOn(nodeFs, 'openSync').mockImplementation((path, how, mode) => {
        if (typeof how === 'number' && (how & fs.constants.O_DIRECT) !== 0) {
          real(path, how & ~fs.constants.O_DIRECT, mode as number);
          throw Object.assign(new Error('EINVAL: invalid argument, open'), { code: 'EINVAL' });
        }
        return real(path, how, mode);
      });
      try {
        const first = join(dir, 'first.bin');
        const writer = open(first, 'area', true);
        writer.write(Buffer.from('through the page cache'));
        writer.commit();
        expect(fs.readFileSync(first, 'utf8')).toBe('through the page cache');
        expect(fs.statSync(first).mode & 0o777).toBe(0o444);
        const directTries = () =>
          spy.mock.calls.filter(([, how]) => typeof how === 'number' && how & fs.constants.O_DIRECT)
            .length;
        expect(directTries()).toBe(1);
        open(join(dir, 'second.bin'), 'area', true).commit();
        expect(directTries()).toBe(1);
      } finally {
        spy.mockRestore();
      }
    });
  });
});
