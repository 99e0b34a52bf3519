import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { syncFilesystem } from './file-tree';

describe('syncFilesystem', () => {
  it('answers each call in turn through one shell: true where the filesystem was flushed, false for a path that is not there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'syncfs-'));
    expect(
      await Promise.all([
        syncFilesystem(dir),
        syncFilesystem(join(dir, 'missing', 'x')),
        syncFilesystem(dir),
      ]),
    ).toEqual([true, false, true]);
    expect(await syncFilesystem(dir)).toBe(true);
  });

  it('flushes a path the shell cannot take on a line of its own, by a child of its own', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'syncfs-\nline-'));
    expect(await syncFilesystem(dir)).toBe(true);
  });
});
