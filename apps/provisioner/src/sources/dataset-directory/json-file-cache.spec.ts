import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../../test/support/dropzone-fixture';
import { JsonFileCache } from './json-file-cache';

function writeAt(path: string, content: string, mtime: Date): void {
  writeFileSync(path, content);
  utimesSync(path, mtime, mtime);
}

describe('JsonFileCache', () => {
  const path = () => join(tempDir('json-cache'), 'dataset.json');

  it('reads objects, and null for missing files, non-objects and invalid JSON', () => {
    const cache = new JsonFileCache();
    const file = path();
    expect(cache.read(file)).toBeNull();
    writeFileSync(file, '{"title":"A"}');
    expect(cache.read(file)).toEqual({ title: 'A' });
    writeFileSync(file, '[1]');
    expect(cache.read(file)).toBeNull();
    writeFileSync(file, '{not json');
    expect(cache.read(file)).toBeNull();
  });

  it('serves a settled, unchanged file from the cache and re-reads it once its size or mtime changes', () => {
    const cache = new JsonFileCache();
    const file = path();
    const old = new Date(Date.now() - 60_000);
    writeAt(file, '{"title":"A"}', old);
    expect(cache.read(file)).toEqual({ title: 'A' });
    // Same size, same mtime, same inode: indistinguishable, so the cached value stands.
    writeAt(file, '{"title":"B"}', old);
    expect(cache.read(file)).toEqual({ title: 'A' });
    writeAt(file, '{"title":"B2"}', old);
    expect(cache.read(file)).toEqual({ title: 'B2' });
    writeAt(file, '{"title":"C2"}', new Date(old.getTime() + 1000));
    expect(cache.read(file)).toEqual({ title: 'C2' });
  });

  it('never caches a file changed within the racy window', () => {
    const cache = new JsonFileCache();
    const file = path();
    const recent = new Date();
    writeAt(file, '{"title":"A"}', recent);
    expect(cache.read(file)).toEqual({ title: 'A' });
    writeAt(file, '{"title":"B"}', recent);
    expect(cache.read(file)).toEqual({ title: 'B' });
  });
});
